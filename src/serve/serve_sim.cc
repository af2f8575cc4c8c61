#include "serve/serve_sim.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>

#include "model/counts.h"

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

double ServeSim::PoolStepSeconds(int pool, const RankShape& b, const RankShape& m) {
  Pool& P = pools_[pool];
  Key k;
  k.q = {Quantise(b.decode_seqs), Quantise(b.decode_ctx), Quantise(b.prefill_tokens),
         Quantise(b.prefill_seqs), Quantise(m.decode_seqs), Quantise(m.decode_ctx),
         Quantise(m.prefill_tokens), Quantise(m.prefill_seqs)};
  auto it = P.memo.find(k);
  if (it != P.memo.end()) return it->second;
  RankShape qb{Dequantise(k.q[0]), Dequantise(k.q[1]), Dequantise(k.q[2]), Dequantise(k.q[3])};
  RankShape qm{Dequantise(k.q[4]), Dequantise(k.q[5]), Dequantise(k.q[6]), Dequantise(k.q[7])};
  const double s = P.cost->Seconds(qb, qm);
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

StatusOr<ServeSim::Pool> ServeSim::MakePool(const StepCost* cost, Role role, int instances,
                                            int max_running, int64_t kv_capacity, Assign router,
                                            int64_t hold_len, int64_t prompt_len) {
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
  p.kv_cap = kv_capacity >= 0 ? kv_capacity : cost->KvCapacityTokens(hold_len, prompt_len);
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
  auto pool = MakePool(cost, Role::kMixed, opt.instances, opt.max_running, opt.kv_capacity_tokens,
                       opt.router, nominal_isl + nominal_osl, nominal_isl);
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
                     d.prefill_kv_capacity_tokens, d.prefill_router, nominal_isl, nominal_isl);
  if (!pp.ok()) return pp.status();
  auto dp = MakePool(decode, Role::kDecode, opt.instances, opt.max_running,
                     opt.kv_capacity_tokens, opt.router, nominal_isl + nominal_osl, nominal_isl);
  if (!dp.ok()) return dp.status();
  s->pools_.push_back(std::move(*pp));
  s->pools_.push_back(std::move(*dp));
  return s;
}

namespace {

struct Live {
  int64_t need = 0;       // tokens to prefill: the prompt, or prompt + output so far (recompute)
  int64_t prefilled = 0;  // of need (starts at the cached prefix)
  double gen = 0;         // tokens emitted (fractional with MTP acceptance)
  int64_t kv = 0;         // KV tokens held
  int64_t reserve = 0;    // TensorRT-LLM: tokens reserved at admission
  double last_emit = 0;
  double prefill_start = -1;  // disaggregated: its first prefill chunk's step start
  double prefill_end = -1;    // disaggregated: its prefill's end
  int inst = 0, rank = 0;     // where it is now
  // Disaggregated: the decode instance and rank it goes to (SGLang: picked at arrival), the
  // prefill instance and rank that hold its prompt's KV until the transfer ends, and that KV.
  int d_inst = -1, d_rank = 0, p_inst = -1, p_rank = 0;
  int64_t pkv = 0, preserve = 0;
  int64_t dkv = 0, dres = 0;  // KV (and TensorRT-LLM's reserve) allocated on the decode rank
  bool rejected = false;
  // Copies of what a step reads of its RequestSpec and RequestOutcome (its output tokens, whether
  // its first token was streamed, whether it finished), so that a step touches one record per
  // request.
  int64_t output = 0;
  bool streamed = false, finished = false;
};

struct Rank {
  std::deque<int> inbox;  // SGLang with a receive interval: arrived, not yet received
  std::deque<int> waiting;
  std::vector<int> running;
  // Disaggregated decode ranks: requests waiting for the KV allocation (FIFO), and the number
  // allocated that have not joined the running batch yet (transferring, or arrived and waiting).
  std::deque<int> alloc;
  std::deque<int> alloc_inbox;  // SGLang with a receive interval: arrived, not yet received
  int64_t allocated = 0;
  int64_t kv_used = 0, kv_reserved = 0;
  std::vector<std::pair<int, int64_t>> plan;  // (request, prefill chunk; 0 = decode)
  RankShape shape;
};

struct Inst {
  std::vector<Rank> ranks;
  int pool = 0;
  bool busy = false, start_pending = false;
  int rr = 0;
  int replica_rr = 0;  // the first replica of a configured instance: its dp dispatch's turn
  int64_t outstanding = 0;
  double step_start = 0;
  // SGLang's receive counter (ServeOptions::sglang_recv_interval) and the weight of the latest
  // step: 1,000 when it prefilled, 1 when it only decoded, 0 when the instance went idle after it.
  int64_t recv_counter = 0, last_step_weight = 0;
  std::vector<double> channel_free;  // disaggregated decode instances: KV links' free times
};

enum class Ev : uint8_t { kStart, kEnd, kKvArrive, kEnter };

struct Event {
  double t;
  int64_t seq;
  int inst;
  Ev kind;
  int id;  // kKvArrive, kEnter: the request
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

}  // namespace

ServeRun ServeSim::Run(const std::vector<RequestSpec>& reqs, int concurrency) {
  ServeRun run;
  const int64_t n = static_cast<int64_t>(reqs.size());
  const bool disagg = pools_.size() == 2;
  const Pool& entry = pools_.front();
  const Pool& tail = pools_.back();
  run.requests.resize(reqs.size());
  run.kv_capacity_tokens = tail.kv_cap;
  run.max_running = tail.max_running;
  run.ranks = tail.ranks;
  run.instances = tail.instances;
  run.disaggregated = disagg;
  if (disagg) {
    run.prefill_instances = entry.instances;
    run.prefill_ranks = entry.ranks;
    run.prefill_max_running = entry.max_running;
    run.prefill_kv_capacity_tokens = entry.kv_cap;
  }
  const int64_t calls0 = calls_;
  for (int64_t i = 0; i < n; ++i) {
    run.requests[i].prompt = reqs[i].prompt;
    run.requests[i].output = reqs[i].output;
  }
  if (n == 0) return run;

  const bool closed = concurrency > 0;
  run.closed_loop = closed;
  const bool trt = engine_ == Engine::kTrtllm, sgl = engine_ == Engine::kSglang;
  const int recv_interval = opt_.sglang_recv_interval;  // > 1: SGLang only (Make)
  const Assign rank_assign = opt_.rank_assign != Assign::kEngineDefault ? opt_.rank_assign
                             : sgl ? Assign::kRoundRobin
                                   : Assign::kShortestQueue;
  // Per pool: token budget, decode query tokens, MTP acceptance, attention-dp ranks.
  struct PoolRun {
    int64_t mnt = 0, q_tokens = 1;
    double q = 1, accept = 1;
    int dp = 1, first = 0;  // first instance index
    int router_rr = 0;
  };
  std::vector<PoolRun> pr(pools_.size());
  int total_inst = 0;
  for (size_t k = 0; k < pools_.size(); ++k) {
    const StepCost& c = *pools_[k].cost;
    pr[k].mnt = c.max_num_tokens() > 0 ? c.max_num_tokens()
                                       : std::numeric_limits<int64_t>::max() / 4;
    pr[k].q = c.decode_q();
    pr[k].q_tokens = static_cast<int64_t>(pr[k].q);
    pr[k].accept = c.accept();
    pr[k].dp = pools_[k].ranks;
    pr[k].first = total_inst;
    total_inst += pools_[k].instances;
  }

  std::vector<Live> st(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) st[i].output = reqs[i].output;
  std::vector<Inst> inst(total_inst);
  double kv_total = 0;
  for (size_t k = 0; k < pools_.size(); ++k) {
    kv_total += static_cast<double>(pools_[k].kv_cap) * pr[k].dp * pools_[k].instances;
    for (int i = 0; i < pools_[k].instances; ++i) {
      Inst& in = inst[pr[k].first + i];
      in.pool = static_cast<int>(k);
      in.ranks.resize(pr[k].dp);
      if (pools_[k].role == Role::kDecode)
        in.channel_free.assign(
            dis_.kv_channels > 0 ? dis_.kv_channels
                                 : pools_[k].cost->strategy().gpus() / pools_[k].replicas,
            0.0);
    }
  }
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t seq = 0;
  // Global counters for the timeline.
  int64_t g_waiting = 0, g_running = 0, g_kv = 0, g_transfer = 0;
  std::vector<TimelinePoint> samples;
  std::vector<int64_t> waiting_at_arrival;  // in the system (waiting + running + transferring)
  waiting_at_arrival.reserve(closed ? 0 : reqs.size());
  // KV bytes of a prompt (disaggregated transfers), by the decode problem's model and KV dtype
  // (and its strategy: a speculating one sends the draft's cache too).
  const Problem& dprob = tail.cost->sim().problem();

  // Sending.
  int64_t next_open = 0;
  std::deque<std::pair<double, int64_t>> sendq;  // closed loop: (time, request)
  int64_t next_send = 0;
  if (closed) {
    for (; next_send < std::min<int64_t>(n, concurrency); ++next_send) sendq.push_back({0.0, next_send});
  }

  // Early stop (ServeOptions::ttft_stops, open loop): per stop, the requests certain to miss its
  // limit - a first token later than the limit, or none yet once the limit has passed since the
  // arrival (a pointer over the arrivals, in order) - each counted once.
  const size_t n_stops = closed ? 0 : opt_.ttft_stops.size();
  std::vector<std::vector<uint8_t>> late(n_stops, std::vector<uint8_t>(static_cast<size_t>(n), 0));
  std::vector<int64_t> late_count(n_stops, 0), late_next(n_stops, 0);
  std::string stop_reason;
  auto count_late = [&](size_t k, int64_t id) {
    if (late[k][static_cast<size_t>(id)]) return;
    late[k][static_cast<size_t>(id)] = 1;
    ++late_count[k];
  };
  auto note_first = [&](int64_t id, double now) {
    for (size_t k = 0; k < n_stops; ++k)
      if (now - reqs[static_cast<size_t>(id)].arrival_s > opt_.ttft_stops[k].limit_s) count_late(k, id);
  };
  auto certain_miss = [&](double now) {
    for (size_t k = 0; k < n_stops; ++k) {
      const ServeOptions::TtftStop& s = opt_.ttft_stops[k];
      int64_t& p = late_next[k];
      while (p < n && reqs[static_cast<size_t>(p)].arrival_s + s.limit_s < now) {
        if (run.requests[static_cast<size_t>(p)].first_token_s < 0) count_late(k, p);
        ++p;
      }
      // The quantile sits at position q (n - 1) of the sorted TTFTs (linear interpolation):
      // above the limit once the order statistic at floor(q (n - 1)) is among the late ones.
      const int64_t need =
          n - static_cast<int64_t>(std::floor(s.quantile * static_cast<double>(n - 1)));
      if (late_count[k] >= need) {
        stop_reason = fmt::format(
            "stopped early: {} of {} requests certainly have a TTFT above {:.0f} ms, so its "
            "p{:g} does too",
            late_count[k], n, s.limit_s * 1e3, s.quantile * 100);
        return true;
      }
    }
    return false;
  };

  // The client receives request `id`'s first token at `now`.
  auto stream_first = [&](int id, double now) {
    run.requests[id].first_token_s = now;
    st[id].streamed = true;
    note_first(id, now);
    st[id].last_emit = now;
  };

  // Tokens a request's output reserves on a pool: none on a prefill instance (it leaves after its
  // prompt), else what is left to generate.
  auto out_left = [&](const Pool& P, int id) {
    return P.role == Role::kPrefill ? 0.0 : std::max(0.0, st[id].output - st[id].gen);
  };
  auto release = [&](Rank& r, int id) {
    Live& L = st[id];
    r.kv_used -= L.kv;
    g_kv -= L.kv;
    r.kv_reserved -= L.reserve;
    L.kv = 0;
    L.reserve = 0;
  };
  // Preempts running[pos] (recompute: its KV is freed, it goes back to the front of the queue).
  auto preempt = [&](Rank& r, size_t pos) {
    const int id = r.running[pos];
    Live& L = st[id];
    release(r, id);
    L.need = reqs[id].prompt + static_cast<int64_t>(std::floor(L.gen));
    L.prefilled = reqs[id].cached;
    r.running.erase(r.running.begin() + static_cast<std::ptrdiff_t>(pos));
    r.waiting.push_front(id);
    ++run.requests[id].preemptions;
    --g_running;
    ++g_waiting;
  };
  // Moves the queue's front to the running requests holding its KV so far (+ `extra`).
  auto enter = [&](const Pool& P, Rank& r, int64_t extra) {
    const int id = r.waiting.front();
    Live& L = st[id];
    r.waiting.pop_front();
    r.running.push_back(id);
    L.kv = L.prefilled + extra;
    r.kv_used += L.kv;
    g_kv += L.kv;
    if (trt) {
      L.reserve = reqs[id].prompt + static_cast<int64_t>(std::ceil(out_left(P, id) + L.gen));
      r.kv_reserved += L.reserve;
    }
    --g_waiting;
    ++g_running;
    return id;
  };
  auto admit = [&](const Pool& P, Rank& r, int64_t chunk) {
    r.plan.push_back({enter(P, r, chunk), chunk});
  };
  auto plan_decode = [&](Rank& r, int id, int64_t q_tokens) {
    st[id].kv += q_tokens;
    r.kv_used += q_tokens;
    g_kv += q_tokens;
    r.plan.push_back({id, 0});
  };

  // One rank's batch for the next step (the engine's scheduler).
  auto compose = [&](const Pool& P, const PoolRun& R, Rank& r, double now) {
    r.plan.clear();
    int64_t budget = R.mnt;
    const int64_t kv_cap = P.kv_cap, q_tokens = R.q_tokens;
    const int max_running = P.max_running;
    auto free_kv = [&] { return kv_cap - r.kv_used; };
    double future = 0;  // SGLang: reserve for the running requests' remaining outputs
    if (sgl)
      for (int id : r.running) future += opt_.sglang_new_token_ratio * out_left(P, id);
    if (P.role == Role::kDecode) {
      // Requests whose KV arrived join the running batch (FCFS) while max running allows; their
      // KV was allocated before the transfer. SGLang streams their first token as they join (its
      // prebuilt batch, before this step runs). Preempted requests hold no KV and stay queued
      // for the recompute paths below; the arrived ones pass them (they hold their KV already:
      // waiting behind a recompute that needs their KV would stall the rank for good).
      for (size_t k = 0; k < r.waiting.size() &&
                         static_cast<int>(r.running.size()) < max_running;) {
        const int id = r.waiting[k];
        const Live& L = st[id];
        if (L.prefilled < L.need) {  // preempted
          ++k;
          continue;
        }
        if (!sgl && !trt && free_kv() < q_tokens) break;  // vLLM: room for the step's token
        r.waiting.erase(r.waiting.begin() + static_cast<std::ptrdiff_t>(k));
        r.running.push_back(id);
        --r.allocated;
        --g_waiting;
        ++g_running;
        if (sgl) stream_first(id, now);
      }
    }
    if (sgl) {
      // Prefill step when a chunked prompt is unfinished or a waiting request can be admitted.
      for (int id : r.running) {
        Live& L = st[id];
        if (L.prefilled >= L.need || budget <= 0) continue;
        const int64_t chunk = std::min(L.need - L.prefilled, budget);
        L.kv += chunk;
        r.kv_used += chunk;
        g_kv += chunk;
        r.plan.push_back({id, chunk});
        budget -= chunk;
      }
      while (!r.waiting.empty() && budget > 0 &&
             static_cast<int>(r.running.size()) < max_running) {
        const int wid = r.waiting.front();
        const Live& L = st[wid];
        if (L.prefilled >= L.need) break;  // its KV arrived: admitted by the decode pass
        const int64_t rest = L.need - L.prefilled;
        const int64_t chunk = std::min(rest, budget);
        const double need_new =
            static_cast<double>(L.need) + opt_.sglang_new_token_ratio * out_left(P, wid);
        if (static_cast<double>(free_kv()) - future < need_new && !r.running.empty()) break;
        if (free_kv() < L.prefilled + chunk) break;
        future += opt_.sglang_new_token_ratio * out_left(P, wid);
        admit(P, r, chunk);
        budget -= chunk;
        if (chunk < rest) break;  // one chunked request at a time
      }
      if (!r.plan.empty() || P.role == Role::kPrefill) return;
      // Decode step: every running request; retract the latest admitted while the pool is short.
      while (!r.running.empty() &&
             free_kv() < static_cast<int64_t>(r.running.size()) * q_tokens && r.running.size() > 1)
        preempt(r, r.running.size() - 1);
      for (int id : r.running) plan_decode(r, id, q_tokens);
      return;
    }
    // vLLM / TensorRT-LLM / ideal: mixed steps under one token budget, running requests first.
    for (size_t i = 0; i < r.running.size(); ++i) {
      const int id = r.running[i];
      Live& L = st[id];
      const bool prefilling = L.prefilled < L.need;
      const int64_t want = prefilling ? std::min(L.need - L.prefilled, budget) : q_tokens;
      if (want <= 0 || (!prefilling && budget < q_tokens)) continue;
      if (!trt) {
        while (free_kv() < want && r.running.size() > i + 1) preempt(r, r.running.size() - 1);
        if (free_kv() < want) {
          // Not even alone: preempt itself (vLLM), unless it is the only request (it was
          // admitted whole: cannot happen, requests larger than the pool are rejected).
          if (r.running.size() > 1) {
            preempt(r, i);
            break;
          }
          continue;
        }
      }
      if (prefilling) {
        L.kv += want;
        r.kv_used += want;
        g_kv += want;
        r.plan.push_back({id, want});
      } else {
        plan_decode(r, id, q_tokens);
      }
      budget -= want;
    }
    while (!r.waiting.empty() && budget > 0 && static_cast<int>(r.running.size()) < max_running) {
      const int id = r.waiting.front();
      const Live& L = st[id];
      if (L.prefilled >= L.need) break;  // its KV arrived: admitted by the decode pass
      const int64_t chunk = std::min(L.need - L.prefilled, budget);
      if (trt) {
        if (r.kv_reserved + reqs[id].prompt + static_cast<int64_t>(std::ceil(out_left(P, id) + L.gen)) >
            kv_cap)
          break;
      } else if (free_kv() < L.prefilled + chunk) {
        break;
      }
      admit(P, r, chunk);
      budget -= chunk;
    }
  };

  // Disaggregated decode instance ii: the KV allocations its scheduler makes at `now` (below).
  std::function<void(int, double)> allocate;

  auto start_step = [&](int ii, double now) {
    Inst& in = inst[ii];
    const Pool& P = pools_[in.pool];
    const PoolRun& R = pr[in.pool];
    if (recv_interval > 1) {
      // SGLang's receive point: the counter grows by the latest step's weight; the scheduler
      // receives when it reaches the interval, or at once when it has nothing else to run.
      in.recv_counter += in.last_step_weight;
      bool work = false;
      for (const Rank& r : in.ranks) work = work || !r.running.empty() || !r.waiting.empty();
      if (in.recv_counter >= recv_interval || !work) {
        for (Rank& r : in.ranks) {
          r.waiting.insert(r.waiting.end(), r.inbox.begin(), r.inbox.end());
          r.inbox.clear();
          r.alloc.insert(r.alloc.end(), r.alloc_inbox.begin(), r.alloc_inbox.end());
          r.alloc_inbox.clear();
        }
        in.recv_counter = 0;
      }
    }
    if (P.role == Role::kDecode) allocate(ii, now);
    const int dp = R.dp;
    RankShape busiest, mean;
    double best_tokens = -1;
    bool any = false;
    double ctx_total = 0;
    for (Rank& r : in.ranks) {
      compose(P, R, r, now);
      RankShape& s = r.shape;
      s = RankShape{};
      double ctx = 0;
      for (const auto& [id, chunk] : r.plan) {
        if (chunk > 0) {
          s.prefill_tokens += static_cast<double>(chunk);
          s.prefill_seqs += 1;
          if (st[id].prefill_start < 0) st[id].prefill_start = now;
        } else {
          s.decode_seqs += 1;
          ctx += static_cast<double>(st[id].kv - R.q_tokens);
        }
      }
      s.decode_ctx = s.decode_seqs > 0 ? ctx / s.decode_seqs : 0;
      ctx_total += ctx;
      if (!r.plan.empty()) any = true;
      const double tok = s.tokens(R.q);
      if (tok > best_tokens) {
        best_tokens = tok;
        busiest = s;
      }
      mean.decode_seqs += s.decode_seqs / dp;
      mean.prefill_tokens += s.prefill_tokens / dp;
      mean.prefill_seqs += s.prefill_seqs / dp;
    }
    if (!any) {
      in.busy = false;
      in.last_step_weight = 0;
      return;
    }
    in.last_step_weight = mean.prefill_tokens > 0 ? 1000 : 1;
    mean.decode_ctx = mean.decode_seqs > 0 ? ctx_total / (mean.decode_seqs * dp) : 0;
    if (dp == 1) mean = busiest;
    const double dur = std::max(PoolStepSeconds(in.pool, busiest, mean), 1e-9);
    in.busy = true;
    in.step_start = now;
    (P.role == Role::kPrefill ? run.prefill_busy_s : run.decode_busy_s) += dur;
    events.push({now + dur, seq++, ii, Ev::kEnd, -1});
    ++run.steps;
    samples.push_back({now, g_waiting, g_running, kv_total > 0 ? g_kv / kv_total : 0, g_transfer});
  };

  auto kick = [&](int ii, double now) {
    Inst& in = inst[ii];
    if (!in.busy && !in.start_pending) {
      in.start_pending = true;
      events.push({now, seq++, ii, Ev::kStart, -1});
    }
  };

  auto finish = [&](Rank& r, int id, double now, Inst& in) {
    run.requests[id].finish_s = now;
    st[id].finished = true;
    release(r, id);
    --in.outstanding;
    --g_running;
    if (closed && next_send < n) sendq.push_back({now, next_send++});
  };

  // Instance of pool k for a new request: the router picks a configured instance (its load: the
  // requests outstanding on all its replicas), then the engine's dp dispatch one of its
  // independent replicas (as it picks an attention-dp rank: round-robin or the least loaded).
  auto pick_instance = [&](int k) {
    const Pool& P = pools_[k];
    PoolRun& R = pr[k];
    const int groups = P.instances / P.replicas;
    auto group_load = [&](int g) {
      int64_t s = 0;
      for (int j = 0; j < P.replicas; ++j) s += inst[R.first + g * P.replicas + j].outstanding;
      return s;
    };
    int g = 0;
    if (groups > 1) {
      if (P.router == Assign::kRoundRobin) {
        g = R.router_rr++ % groups;
      } else {
        for (int j = 1; j < groups; ++j)
          if (group_load(j) < group_load(g)) g = j;
      }
    }
    int ii = R.first + g * P.replicas;
    if (P.replicas > 1) {
      if (rank_assign == Assign::kRoundRobin) {
        ii += inst[ii].replica_rr++ % P.replicas;
      } else {
        const int base = ii;
        for (int j = base + 1; j < base + P.replicas; ++j)
          if (inst[j].outstanding < inst[ii].outstanding) ii = j;
      }
    }
    return ii;
  };
  // Rank of instance ii for a new request (attention-DP ranks).
  auto pick_rank = [&](int ii) {
    Inst& in = inst[ii];
    const int dp = pr[in.pool].dp;
    int rk = 0;
    if (dp > 1) {
      if (rank_assign == Assign::kRoundRobin) {
        rk = in.rr++ % dp;
      } else {
        auto load = [&](int k) {
          const Rank& r = in.ranks[k];
          return static_cast<int64_t>(r.inbox.size() + r.waiting.size() + r.running.size() +
                                      r.alloc_inbox.size() + r.alloc.size()) +
                 r.allocated;
        };
        for (int k = 1; k < dp; ++k)
          if (load(k) < load(rk)) rk = k;
      }
    }
    return rk;
  };
  // Queues request `id` on a rank of instance ii (SGLang with a receive interval: in the rank's
  // inbox while the instance steps, until its scheduler receives).
  auto enqueue = [&](int ii, int id) {
    const int rk = pick_rank(ii);
    st[id].inst = ii;
    st[id].rank = rk;
    Rank& r = inst[ii].ranks[rk];
    (recv_interval > 1 && inst[ii].busy ? r.inbox : r.waiting).push_back(id);
    ++g_waiting;
  };
  // Disaggregated: request `id` waits for the KV allocation on decode instance jj.
  auto to_decode = [&](int id, double now) {
    Live& L = st[id];
    const int jj = pick_instance(1);
    ++inst[jj].outstanding;
    L.d_inst = jj;
    L.d_rank = pick_rank(jj);
    Rank& r = inst[jj].ranks[L.d_rank];
    (recv_interval > 1 && inst[jj].busy ? r.alloc_inbox : r.alloc).push_back(id);
    kick(jj, now);
  };

  // Disaggregated: request `id`'s KV leaves for its decode instance, whose allocation holds it
  // (KvTransferSeconds, after the transfers queued on that instance's links; layerwise: only
  // the part not hidden behind the prefill, when the transfer starts at the prefill's end).
  auto start_transfer = [&](int id, double now) {
    Live& L = st[id];
    Inst& dst = inst[L.d_inst];
    // A speculating deployment sends the draft's KV cache of the prompt too.
    const double bytes =
        KvBytesForSequence(dprob.model, dprob.workload.kv, reqs[id].prompt) +
        (tail.cost->strategy().mtp > 0
             ? DraftKvBytesForSequence(dprob.model, dprob.workload.kv, reqs[id].prompt)
             : 0.0);
    const double full = KvTransferSeconds(dis_.link, bytes);
    const double t = now <= L.prefill_end
                         ? ExposedKvTransfer(full, L.prefill_end - std::max(0.0, L.prefill_start),
                                             dprob.model.num_layers, dis_.layerwise)
                         : full;
    auto ch = std::min_element(dst.channel_free.begin(), dst.channel_free.end());
    const double done = std::max(now, *ch) + t;
    *ch = done;
    events.push({done, seq++, L.d_inst, Ev::kKvArrive, id});
  };
  // Request `id`'s prefill finished on rank p_rank of prefill instance ii, which holds its KV
  // until the transfer ends. SGLang: its decode KV is allocated already, the transfer starts;
  // else it waits for the allocation on the decode instance the decode router picks.
  auto hand_off = [&](int id, int ii, int p_rank, double now) {
    Live& L = st[id];
    L.pkv = L.kv;
    L.preserve = L.reserve;
    L.kv = L.reserve = 0;
    L.p_inst = ii;
    L.p_rank = p_rank;
    L.prefill_end = now;
    run.requests[id].prefill_end_s = now;
    ++g_transfer;
    if (sgl) {
      start_transfer(id, now);
    } else {
      to_decode(id, now);
    }
    L.inst = L.d_inst;
  };
  allocate = [&](int ii, double now) {
    Inst& in = inst[ii];
    const Pool& P = pools_[in.pool];
    const int64_t cap = P.kv_cap, maxr = P.max_running;
    const int64_t res = dis_.sglang_reserved_decode_tokens, clip = dis_.sglang_clip_max_new_tokens;
    // SGLang: the request slots of its decode req_to_token pool (max running, plus 2 x max
    // running pre-allocation slots when that is <= 32).
    const int64_t slots = maxr + (maxr <= 32 ? 2 * maxr : 0);
    for (Rank& r : in.ranks) {
      if (r.alloc.empty()) continue;
      int64_t retractable = 0, single = 0;
      if (sgl) {
        for (int id : r.running) retractable += reqs[id].prompt + static_cast<int64_t>(st[id].gen);
        for (int id : r.running)
          single = std::max(single,
                            reqs[id].prompt + std::min(reqs[id].output, clip) - retractable);
      }
      while (!r.alloc.empty()) {
        const int id = r.alloc.front();
        Live& L = st[id];
        const int64_t prompt = reqs[id].prompt, out = reqs[id].output;
        const int64_t held = static_cast<int64_t>(r.running.size()) + r.allocated;
        const int64_t free_tok = cap - r.kv_used;
        if (sgl) {
          if (held >= slots) break;
          const int64_t allocatable = free_tok - std::max(res * held, single);
          const bool fits = prompt + res <= allocatable &&
                            prompt + std::min(out, clip) - retractable <= allocatable;
          // An empty rank takes a request that fits it whole (else nothing would ever free).
          if (!fits && !(held == 0 && prompt + out <= cap)) break;
        } else if (trt) {
          if (held >= maxr || r.kv_reserved + prompt + out > cap) break;
        } else if (static_cast<int64_t>(r.running.size()) >= maxr || free_tok < prompt) {
          break;
        }
        r.alloc.pop_front();
        ++r.allocated;
        run.requests[id].kv_alloc_s = now;
        L.dkv = prompt;
        r.kv_used += prompt;
        g_kv += prompt;
        if (trt) {
          L.dres = prompt + out;
          r.kv_reserved += L.dres;
        }
        if (sgl) {
          --g_waiting;  // now queued on its prefill instance
          enqueue(L.p_inst, id);
          kick(L.p_inst, now);
        } else {
          start_transfer(id, now);
        }
      }
    }
  };
  // Request `id`'s KV reached decode instance jj: the prefill instance frees it, the request
  // waits to join jj's batch.
  auto kv_arrive = [&](int jj, int id, double now) {
    Live& L = st[id];
    Rank& pr_rank = inst[L.p_inst].ranks[L.p_rank];
    pr_rank.kv_used -= L.pkv;
    pr_rank.kv_reserved -= L.preserve;
    g_kv -= L.pkv;
    L.pkv = L.preserve = 0;
    kick(L.p_inst, now);
    --g_transfer;
    run.requests[id].kv_ready_s = now;
    L.need = L.prefilled = reqs[id].prompt;  // its prompt's KV is here
    L.kv = L.dkv;
    L.reserve = L.dres;
    L.dkv = L.dres = 0;
    if (!sgl && !trt) L.gen = 0;  // vLLM: the decode instance computes the first token itself
    L.inst = jj;
    L.rank = L.d_rank;
    inst[jj].ranks[L.d_rank].waiting.push_back(id);
    ++g_waiting;
    kick(jj, now);
  };

  auto end_step = [&](int ii, double now) {
    Inst& in = inst[ii];
    const Pool& P = pools_[in.pool];
    const PoolRun& R = pr[in.pool];
    for (size_t rk = 0; rk < in.ranks.size(); ++rk) {
      Rank& r = in.ranks[rk];
      bool any_left = false;
      for (const auto& [id, chunk] : r.plan) {
        Live& L = st[id];
        if (chunk > 0) {
          L.prefilled += chunk;
          if (L.prefilled < L.need) continue;
          // Disaggregated: the client sees this token only from the decode instance, unless the
          // request ends here.
          const bool to_dec = P.role == Role::kPrefill && L.gen + 1 < L.output;
          if (!to_dec) {
            if (!L.streamed) {
              stream_first(id, now);
            } else {
              run.itl.Add(now - L.last_emit);
            }
          }
          L.gen += 1;
          L.last_emit = now;
        } else {
          const double before = std::floor(L.gen);
          L.gen = std::min<double>(static_cast<double>(L.output), L.gen + R.accept);
          const int64_t emitted = static_cast<int64_t>(std::floor(L.gen) - before);
          const int64_t back = R.q_tokens - emitted;  // draft slots not kept
          L.kv -= back;
          r.kv_used -= back;
          g_kv -= back;
          if (emitted > 0) {
            if (!L.streamed) {
              stream_first(id, now);  // TensorRT-LLM, vLLM: the first decode step's output
            } else {
              run.itl.Add(now - L.last_emit);
            }
            L.last_emit = now;
          }
        }
        if (std::floor(L.gen) >= L.output) {
          finish(r, id, now, in);
          any_left = true;
        } else if (P.role == Role::kPrefill) {
          // Prompt done: the KV leaves for the decode pool.
          --in.outstanding;
          --g_running;
          hand_off(id, ii, static_cast<int>(rk), now);
          any_left = true;
        }
      }
      if (any_left)
        r.running.erase(std::remove_if(r.running.begin(), r.running.end(),
                                       [&](int id) {
                                         return st[id].finished || st[id].inst != ii;
                                       }),
                        r.running.end());
    }
    in.busy = false;
  };

  // A request reaches the engine this long after its client sent it (the entry pool's engine's
  // request overhead, Simulator::RequestOverheadS): its TTFT and latency include the wait, the
  // steps do not.
  const double overhead_s = entry.cost->sim().RequestOverheadS();
  run.request_overhead_s = overhead_s;
  run.recv_interval = recv_interval;
  auto reach_engine = [&](int id, double now) {
    Live& L = st[id];
    const RequestSpec& rq = reqs[id];
    run.requests[id].engine_s = now;
    // Larger than a rank's whole KV pool: the engine refuses it.
    const bool too_big = disagg ? rq.prompt > entry.kv_cap || rq.prompt + rq.output > tail.kv_cap
                                : rq.prompt + rq.output > entry.kv_cap;
    if (too_big) {
      L.rejected = true;
      if (closed && next_send < n) sendq.push_back({now, next_send++});
      return;
    }
    const int ii = pick_instance(0);
    L.need = rq.prompt;
    L.prefilled = rq.cached;
    L.last_emit = now;
    ++inst[ii].outstanding;
    if (disagg && sgl && rq.output > 1) {
      // SGLang: the decode instance pre-allocates the prompt's KV before the prefill may start.
      L.p_inst = ii;
      ++g_waiting;
      to_decode(id, now);
      return;
    }
    enqueue(ii, id);
    kick(ii, now);
  };
  auto route = [&](int id, double now) {
    run.requests[id].arrival_s = now;
    if (overhead_s > 0) events.push({now + overhead_s, seq++, 0, Ev::kEnter, id});
    else reach_engine(id, now);
  };

  constexpr double kInf = std::numeric_limits<double>::infinity();
  while (true) {
    double ta = kInf;
    if (!closed) {
      if (next_open < n) ta = reqs[next_open].arrival_s;
    } else if (!sendq.empty()) {
      ta = sendq.front().first;
    }
    const double te = events.empty() ? kInf : events.top().t;
    if (ta == kInf && te == kInf) break;
    if (ta <= te) {
      if (!closed) {
        route(static_cast<int>(next_open++), ta);
        waiting_at_arrival.push_back(g_waiting + g_running + g_transfer);
      } else {
        const int64_t id = sendq.front().second;
        sendq.pop_front();
        route(static_cast<int>(id), ta);
      }
      continue;
    }
    const Event e = events.top();
    events.pop();
    Inst& in = inst[e.inst];
    if (e.kind == Ev::kKvArrive) {
      kv_arrive(e.inst, e.id, e.t);
      continue;
    }
    if (e.kind == Ev::kEnter) {
      reach_engine(e.id, e.t);
      continue;
    }
    if (e.kind == Ev::kEnd) end_step(e.inst, e.t);
    else in.start_pending = false;
    if (!in.busy) start_step(e.inst, e.t);
    if (run.steps >= opt_.max_steps) {
      run.finished = false;
      break;
    }
    if (n_stops > 0 && certain_miss(e.t)) {
      run.finished = false;
      break;
    }
  }

  // Summary figures.
  run.cost_calls = calls_ - calls0;
  double first = kInf, last = 0;
  int64_t undone = 0, rejected = 0;
  for (int64_t i = 0; i < n; ++i) {
    const RequestOutcome& o = run.requests[i];
    if (st[i].rejected) ++rejected;
    if (!o.done()) {
      ++undone;
      continue;
    }
    first = std::min(first, o.arrival_s);
    last = std::max(last, o.finish_s);
  }
  run.makespan_s = last > first ? last - first : 0;
  if (!stop_reason.empty()) {
    run.unstable = true;
    run.unstable_reason = stop_reason;
  } else if (rejected > 0) {
    run.unstable = true;
    run.unstable_reason = fmt::format(
        "{} requests need more KV than one rank holds ({} tokens): the engine rejects them",
        rejected, disagg ? std::min(entry.kv_cap, tail.kv_cap) : entry.kv_cap);
  } else if (!run.finished || undone > 0) {
    run.unstable = true;
    run.unstable_reason = fmt::format("{} of {} requests unfinished after {} steps (work limit)",
                                      undone, n, run.steps);
  } else if (!closed && n >= 40) {
    // Growth of the requests in the system (waiting or running, sampled at arrivals): their mean
    // over the last quarter of the arrivals against the second quarter. A stable system
    // fluctuates around rate x mean latency; an overloaded one grows by (offered - served rate)
    // x time, in the queue or, when the engine admits everything (SGLang's prefill priority), in
    // an ever larger and slower decode batch.
    const size_t m = waiting_at_arrival.size(), qn = m / 4;
    auto mean_of = [&](size_t a, size_t b) {
      double s = 0;
      for (size_t i = a; i < b; ++i) s += static_cast<double>(waiting_at_arrival[i]);
      return s / static_cast<double>(std::max<size_t>(1, b - a));
    };
    const double w2 = mean_of(qn, 2 * qn), w4 = mean_of(3 * qn, m);
    if (w4 > 1.5 * w2 + 10 && w4 > 0.01 * static_cast<double>(n)) {
      run.unstable = true;
      run.unstable_reason = fmt::format(
          "the queue grows: {:.0f} requests in the system on average over the last quarter of "
          "the arrivals against {:.0f} over the second (the offered rate is above what the "
          "deployment serves)",
          w4, w2);
    }
  }
  // Timeline: keep at most timeline_points samples, evenly spaced in time (the latest sample at or
  // before each grid time, and the peak queue of the interval).
  if (!samples.empty()) {
    const double t0 = samples.front().t_s, t1 = samples.back().t_s;
    const int P = opt_.timeline_points;
    size_t j = 0;
    for (int k = 0; k < P; ++k) {
      const double tk = t0 + (t1 - t0) * k / (P - 1);
      TimelinePoint best = samples[j];
      while (j + 1 < samples.size() && samples[j + 1].t_s <= tk) {
        ++j;
        if (samples[j].waiting > best.waiting) best.waiting = samples[j].waiting;
        best.running = samples[j].running;
        best.kv_fraction = samples[j].kv_fraction;
        best.transferring = samples[j].transferring;
      }
      best.t_s = tk;
      run.timeline.push_back(best);
      if (t1 <= t0) break;
    }
  }
  return run;
}

}  // namespace l2s::serve
