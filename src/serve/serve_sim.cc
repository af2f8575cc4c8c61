#include "serve/serve_sim.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace l2s::serve {

const char* AssignName(Assign a) {
  switch (a) {
    case Assign::kEngineDefault: return "default";
    case Assign::kRoundRobin: return "round-robin";
    case Assign::kShortestQueue: return "shortest-queue";
  }
  return "?";
}

bool ParseAssign(const std::string& s, Assign* out) {
  if (s == "default") *out = Assign::kEngineDefault;
  else if (s == "round-robin" || s == "rr") *out = Assign::kRoundRobin;
  else if (s == "shortest-queue" || s == "sq") *out = Assign::kShortestQueue;
  else return false;
  return true;
}

namespace {
constexpr double kHistLo = 1e-6;      // s
constexpr double kHistStep = 0.005;   // ln width of a bin
constexpr int kHistBins = 4606;       // up to 1e4 s
}  // namespace

void LogHistogram::Add(double x, double weight) {
  if (!(x >= 0) || weight <= 0) return;
  if (bins_.empty()) bins_.assign(kHistBins, 0.0);
  // The requests of one step add the same gap in turn: its bin is computed once.
  if (x != last_x_) {
    const int b = x <= kHistLo ? 0 : static_cast<int>(std::log(x / kHistLo) / kHistStep);
    last_b_ = std::clamp(b, 0, kHistBins - 1);
    last_x_ = x;
  }
  bins_[last_b_] += weight;
  w_ += weight;
  sum_ += x * weight;
}

double LogHistogram::Quantile(double q) const {
  if (w_ <= 0) return 0;
  const double target = q * w_;
  double acc = 0;
  for (int b = 0; b < kHistBins; ++b) {
    acc += bins_[b];
    if (acc >= target && bins_[b] > 0) return kHistLo * std::exp((b + 0.5) * kHistStep);
  }
  return kHistLo * std::exp((kHistBins - 0.5) * kHistStep);
}

size_t ServeSim::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ULL;
  for (int32_t v : k.q) {
    h ^= static_cast<uint32_t>(v);
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h ^ (h >> 29));
}

int32_t ServeSim::Quantise(double x) const {
  if (x <= 0) return 0;
  if (x <= 64) return static_cast<int32_t>(std::lround(x * 4));
  return 256 + static_cast<int32_t>(std::lround(opt_.shape_steps_per_octave * std::log2(x / 64)));
}

double ServeSim::Dequantise(int32_t q) const {
  if (q <= 256) return q / 4.0;
  return 64 * std::exp2(static_cast<double>(q - 256) / opt_.shape_steps_per_octave);
}

StepCost::Times ServeSim::PoolStepTimes(int pool, const RankShape& b, const RankShape& m) {
  Pool& P = pools_[pool];
  Key k;
  k.q = {Quantise(b.decode_seqs), Quantise(b.decode_ctx), Quantise(b.prefill_tokens),
         Quantise(b.prefill_seqs), Quantise(m.decode_seqs), Quantise(m.decode_ctx),
         Quantise(m.prefill_tokens), Quantise(m.prefill_seqs)};
  auto it = P.memo.find(k);
  if (it != P.memo.end()) return it->second;
  RankShape qb{Dequantise(k.q[0]), Dequantise(k.q[1]), Dequantise(k.q[2]), Dequantise(k.q[3])};
  RankShape qm{Dequantise(k.q[4]), Dequantise(k.q[5]), Dequantise(k.q[6]), Dequantise(k.q[7])};
  const StepCost::Times s = P.cost->StepTimes(qb, qm);
  ++calls_;
  P.memo.emplace(k, s);
  return s;
}

int64_t ServeSim::memo_size() const {
  int64_t n = 0;
  for (const Pool& p : pools_) n += static_cast<int64_t>(p.memo.size());
  return n;
}

namespace {
// `engine`: the deployment's scheduler family (the receive interval is SGLang's).
Status CheckServeOptions(const ServeOptions& opt, Engine engine) {
  if (opt.instances < 1 || opt.instances > 1'000'000)
    return Status::InvalidArgument("serve: instances must be in [1, 10^6]");
  if (opt.max_running < 0) return Status::InvalidArgument("serve: max running must be >= 0");
  if (opt.shape_steps_per_octave < 1 || opt.shape_steps_per_octave > 1'000'000)
    return Status::InvalidArgument("serve: shape resolution must be in [1, 10^6] steps per octave");
  if (opt.timeline_points < 2) return Status::InvalidArgument("serve: timeline needs >= 2 points");
  if (!(opt.sglang_new_token_ratio >= 0 && opt.sglang_new_token_ratio <= 1))
    return Status::InvalidArgument("serve: new_token_ratio must be in [0, 1]");
  if (opt.sglang_recv_interval < 1 || opt.sglang_recv_interval > 1'000'000)
    return Status::InvalidArgument("serve: the scheduler receive interval must be in [1, 10^6]");
  if (opt.sglang_recv_interval > 1 && engine != Engine::kSglang)
    return Status::InvalidArgument(fmt::format(
        "serve: the scheduler receive interval is an SGLang setting (the engine is {})",
        EngineName(engine)));
  return Status::Ok();
}
}  // namespace

int64_t RankKvTokens(const StepCost& cost, PoolKind kind, int64_t nominal_isl,
                     int64_t nominal_osl) {
  return cost.KvCapacityTokens(
      kind == PoolKind::kPrefill ? nominal_isl : nominal_isl + nominal_osl, nominal_isl);
}

int64_t RankKvNeed(const RequestSpec& r, PoolKind kind) {
  return kind == PoolKind::kPrefill ? r.prompt : r.prompt + r.output;
}

StatusOr<ServeSim::Pool> ServeSim::MakePool(const StepCost* cost, Role role, int instances,
                                            int max_running, int64_t kv_capacity, Assign router,
                                            int64_t nominal_isl, int64_t nominal_osl) {
  Pool p;
  p.cost = cost;
  p.role = role;
  const int dp = cost->strategy().dp;
  p.replicas = dp > 1 && cost->sim().SyncRanks(cost->strategy()) == 1 ? dp : 1;
  p.ranks = dp / p.replicas;
  p.instances = instances * p.replicas;
  p.router = router;
  p.max_running =
      max_running > 0 ? max_running
                      : DefaultMaxRunning(cost->sim().problem().workload.engine,
                                          cost->strategy().mtp, cost->strategy().dp);
  p.kv_cap =
      kv_capacity >= 0 ? kv_capacity : RankKvTokens(*cost, role, nominal_isl, nominal_osl);
  if (p.kv_cap <= 0)
    return Status::Invalid(fmt::format(
        "serve: the weights leave no memory for the KV cache on this {}layout",
        role == Role::kPrefill ? "prefill " : role == Role::kDecode ? "decode " : ""));
  return p;
}

StatusOr<std::unique_ptr<ServeSim>> ServeSim::Make(const StepCost* cost, const ServeOptions& opt,
                                                   int64_t nominal_isl, int64_t nominal_osl) {
  if (cost == nullptr) return Status::InvalidArgument("serve: no step cost");
  const Engine engine = cost->sim().problem().workload.engine;
  if (Status st = CheckServeOptions(opt, engine); !st.ok()) return st;
  std::unique_ptr<ServeSim> s(new ServeSim(opt));
  s->engine_ = engine;
  auto pool = MakePool(cost, Role::kAggregated, opt.instances, opt.max_running, opt.kv_capacity_tokens,
                       opt.router, nominal_isl, nominal_osl);
  if (!pool.ok()) return pool.status();
  s->pools_.push_back(std::move(*pool));
  return s;
}

StatusOr<std::unique_ptr<ServeSim>> ServeSim::MakeDisagg(const StepCost* prefill,
                                                         const StepCost* decode,
                                                         const ServeOptions& opt,
                                                         const DisaggServeOptions& d,
                                                         int64_t nominal_isl,
                                                         int64_t nominal_osl) {
  if (prefill == nullptr || decode == nullptr)
    return Status::InvalidArgument("serve: no step cost");
  const Engine e = decode->sim().problem().workload.engine;
  if (Status st = CheckServeOptions(opt, e); !st.ok()) return st;
  if (d.prefill_instances < 1 || d.prefill_instances > 1'000'000)
    return Status::InvalidArgument("serve: prefill instances must be in [1, 10^6]");
  if (d.prefill_max_running < 0)
    return Status::InvalidArgument("serve: prefill max running must be >= 0");
  if (!(d.link.bw > 0) || !(d.link.latency >= 0))
    return Status::InvalidArgument("serve: the KV link needs a positive bandwidth");
  if (d.kv_channels < 0) return Status::InvalidArgument("serve: KV channels must be >= 0");
  if (d.sglang_reserved_decode_tokens < 0 || d.sglang_clip_max_new_tokens < 0)
    return Status::InvalidArgument("serve: SGLang's decode reserve and clip must be >= 0");
  if (prefill->sim().problem().workload.engine != e)
    return Status::InvalidArgument("serve: the prefill and decode pools run different engines");
  std::unique_ptr<ServeSim> s(new ServeSim(opt));
  s->engine_ = e;
  s->dis_ = d;
  auto pp = MakePool(prefill, Role::kPrefill, d.prefill_instances, d.prefill_max_running,
                     d.prefill_kv_capacity_tokens, d.prefill_router, nominal_isl, nominal_osl);
  if (!pp.ok()) return pp.status();
  auto dp = MakePool(decode, Role::kDecode, opt.instances, opt.max_running,
                     opt.kv_capacity_tokens, opt.router, nominal_isl, nominal_osl);
  if (!dp.ok()) return dp.status();
  s->pools_.push_back(std::move(*pp));
  s->pools_.push_back(std::move(*dp));
  return s;
}

}  // namespace l2s::serve
