// Disaggregated prefill/decode serving: the joining of two Simulator evaluations (disagg.h).
#include "sim/disagg.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/counts.h"
#include "model/json_fields.h"  // L2S_ASSIGN_OR_RETURN, L2S_RETURN_IF_ERROR

namespace l2s {

DisaggSetup SharedSetup(const Problem& serve) {
  DisaggSetup s;
  s.serve = serve;
  s.prefill_pool = serve.cluster;
  s.decode_pool = serve.cluster;
  s.shared = true;
  s.total_gpus = serve.cluster.num_gpus;
  return s;
}

StatusOr<Problem> PrefillProblem(const Problem& serve, const ClusterSpec& pool, int g) {
  Problem p = serve;
  L2S_ASSIGN_OR_RETURN(p.cluster, ResizeCluster(pool, g));
  p.workload.mode = Mode::kPrefill;
  p.workload.disagg_pool = true;
  p.workload.ttft_ms = 0;  // the joint TTFT limit is checked by DisaggModel::Combine
  p.workload.tpot_ms = 0;
  return p;
}

StatusOr<Problem> DecodeProblem(const Problem& serve, const ClusterSpec& pool, int g) {
  Problem p = serve;
  L2S_ASSIGN_OR_RETURN(p.cluster, ResizeCluster(pool, g));
  Workload& w = p.workload;
  w.mode = Mode::kDecode;
  w.disagg_pool = true;
  // Sequences at uniformly spread progress attend isl + osl/2 tokens on average (as serve mode's
  // decode share does) and each reserves its whole isl + osl.
  w.context = serve.workload.isl + serve.workload.osl / 2;
  w.kv_hold = serve.workload.isl + serve.workload.osl;
  w.ttft_ms = 0;
  return p;
}

std::vector<int> InstanceSizes(const ClusterSpec& pool) {
  std::vector<int> out;
  const int domain = pool.gpus_per_domain, n = pool.num_gpus;
  for (int g = 1; g < domain && g <= n; g *= 2) out.push_back(g);
  for (int g = domain; g <= n; g += domain) out.push_back(g);
  return out;
}

Evaluation DisaggEvaluation::AsEvaluation() const {
  Evaluation e = decode.eval;  // memory and breakdown figures: the decode instance's
  e.verdict = verdict;
  e.tokens_per_s = tokens_per_s;
  e.tokens_per_s_per_gpu = tokens_per_s_per_gpu;
  e.ttft_s = ttft_s;
  e.tpot_s = tpot_s;
  return e;
}

DisaggModel::DisaggModel(DisaggSetup setup) : setup_(std::move(setup)) {
  prefill_sizes_ = InstanceSizes(setup_.prefill_pool);
  decode_sizes_ = InstanceSizes(setup_.decode_pool);
  kv_bytes_ = KvBytesForSequence(setup_.serve.model, setup_.serve.workload.kv,
                                 setup_.serve.workload.isl);
  if (setup_.speculating)
    kv_bytes_ += DraftKvBytesForSequence(setup_.serve.model, setup_.serve.workload.kv,
                                         setup_.serve.workload.isl);
}

StatusOr<std::unique_ptr<DisaggModel>> DisaggModel::Make(DisaggSetup setup) {
  const Workload& w = setup.serve.workload;
  if (w.mode != Mode::kServe)
    return Status::InvalidArgument(fmt::format(
        "disaggregated serving needs --mode serve (got --mode {})", ModeName(w.mode)));
  if (w.isl < 1 || w.osl < 1)
    return Status::InvalidArgument("disaggregated serving needs isl >= 1 and osl >= 1");
  L2S_RETURN_IF_ERROR(ValidateCluster(setup.prefill_pool, setup.prefill_pool.name));
  L2S_RETURN_IF_ERROR(ValidateCluster(setup.decode_pool, setup.decode_pool.name));
  const int pools = setup.shared ? setup.prefill_pool.num_gpus
                                 : setup.prefill_pool.num_gpus + setup.decode_pool.num_gpus;
  if (setup.total_gpus < pools)
    return Status::InvalidArgument(fmt::format(
        "the pools hold {} GPUs but the cluster has only {}", pools, setup.total_gpus));
  if (setup.shared && setup.prefill_pool.num_gpus < 2)
    return Status::InvalidArgument(
        "disaggregated serving needs at least 2 GPUs: one prefill and one decode instance");
  if (!setup.shared && !(setup.cross.bw > 0))
    return Status::InvalidArgument("the link between the pools needs a positive bandwidth");
  return std::unique_ptr<DisaggModel>(new DisaggModel(std::move(setup)));
}

namespace {
const Simulator& CachedSim(std::map<int, std::unique_ptr<Simulator>>* cache, int g,
                           StatusOr<Problem> (*make)(const Problem&, const ClusterSpec&, int),
                           const Problem& serve, const ClusterSpec& pool) {
  auto it = cache->find(g);
  if (it != cache->end()) return *it->second;
  StatusOr<Problem> p = make(serve, pool, g);
  // Sizes come from InstanceSizes, which ValidateCluster accepts; a failure would be a bug: fall
  // back to the pool's own size so that the evaluation is structurally invalid, not a crash.
  if (!p.ok()) p = make(serve, pool, pool.num_gpus);
  auto sim = std::make_unique<Simulator>(std::move(*p));
  const Simulator& ref = *sim;
  cache->emplace(g, std::move(sim));
  return ref;
}
}  // namespace

const Simulator& DisaggModel::PrefillSim(int g) const {
  return CachedSim(&prefill_sims_, g, &PrefillProblem, setup_.serve, setup_.prefill_pool);
}

const Simulator& DisaggModel::DecodeSim(int g) const {
  return CachedSim(&decode_sims_, g, &DecodeProblem, setup_.serve, setup_.decode_pool);
}

Problem DisaggModel::PrefillServeProblem(int g) const {
  Problem p = setup_.serve;
  p.cluster = PrefillSim(g).problem().cluster;
  p.workload.disagg_pool = true;
  return p;
}

Problem DisaggModel::DecodeServeProblem(int g) const {
  Problem p = setup_.serve;
  p.cluster = DecodeSim(g).problem().cluster;
  p.workload.disagg_pool = true;
  return p;
}

KvLink DisaggModel::Link(int gp, int gd) const {
  if (!setup_.shared) return setup_.cross;
  const ClusterSpec& c = setup_.prefill_pool;
  KvLink l;
  if (gp + gd <= c.gpus_per_domain) {  // a prefill and a decode instance share a domain
    l.nvlink = true;
    l.bw = c.gpu.nvlink_bw;
    l.latency = c.nvlink_latency;
  } else {
    l.bw = c.scaleout_bw;
    l.latency = c.scaleout_latency;
  }
  return l;
}

double KvTransferSeconds(const KvLink& link, double bytes) {
  return bytes / link.bw + link.latency;
}

double ExposedKvTransfer(double transfer_s, double prefill_s, int layers, bool layerwise) {
  if (!layerwise) return transfer_s;
  // Layer l's KV leaves while layers l+1..L are prefilled: what sticks out is the last layer's
  // share, or more when the link is slower than the prefill.
  const double L = std::max(1, layers);
  return std::max(transfer_s / L, transfer_s - prefill_s * (L - 1) / L);
}

double DisaggModel::PrefillLatencyLimitMs(int gp, int gd, double step_ms) const {
  const double ttft_ms = setup_.serve.workload.ttft_ms > 0
                            ? setup_.serve.workload.ttft_ms
                            : std::numeric_limits<double>::infinity();
  const double t_ms = KvTransferSeconds(Link(gp, gd), kv_bytes_) * 1e3;
  const double x = ttft_ms - step_ms - t_ms;
  if (!setup_.layerwise) return x;
  const double L = std::max(1, setup_.serve.model.num_layers);
  return std::min(ttft_ms - step_ms - t_ms / L, L * x);
}

double DisaggModel::ExposedTransfer(double transfer_s, double prefill_s) const {
  return ExposedKvTransfer(transfer_s, prefill_s, setup_.serve.model.num_layers,
                           setup_.layerwise);
}

bool DisaggModel::BestCounts(int gp, double cp, int gd, double cd, double link_rps_per_gpu,
                             Counts* out) const {
  const int P = setup_.prefill_pool.num_gpus, D = setup_.decode_pool.num_gpus;
  const int np_max = setup_.shared ? (P - gd) / gp : P / gp;
  bool found = false;
  int best_gpus = 0;
  for (int np = 1; np <= np_max; ++np) {
    const int nd_max = setup_.shared ? (P - np * gp) / gd : D / gd;
    for (int nd = 1; nd <= nd_max; ++nd) {
      const double link = std::min(np * gp, nd * gd) * link_rps_per_gpu;
      const double rate = std::min({np * cp, nd * cd, link});
      const int gpus = np * gp + nd * gd;
      // Highest rate; among equal rates the fewest GPUs (the rest stay free), then fewest np.
      const bool better = !found || rate > out->rate * (1 + 1e-12) ||
                          (rate >= out->rate * (1 - 1e-12) && gpus < best_gpus);
      if (better) {
        found = true;
        best_gpus = gpus;
        *out = Counts{np, nd, rate, link};
      }
      // More decode instances cannot raise the rate once they out-serve the prefill instances
      // and out-number their GPUs (the link term).
      if (nd * cd >= np * cp && nd * gd >= np * gp) break;
    }
  }
  return found;
}

DisaggEvaluation DisaggModel::Combine(int gp, const Strategy& sp, const Evaluation& ep, int gd,
                                      const Strategy& sd, const Evaluation& ed) const {
  const Workload& w = setup_.serve.workload;
  DisaggEvaluation d;
  d.total_gpus = setup_.total_gpus;
  d.kv_bytes_per_prompt = kv_bytes_;
  d.prefill = RolePlan{sp, ep, gp, 0, 0, 0};
  d.decode = RolePlan{sd, ed, gd, 0, 0, 0};
  if (!ep.valid()) {
    d.verdict = ep.verdict;
    d.reason = "prefill: " + PrefillSim(gp).Reason(sp, ep);
    return d;
  }
  if (!ed.valid()) {
    d.verdict = ed.verdict;
    d.reason = "decode: " + DecodeSim(gd).Reason(sd, ed);
    return d;
  }
  const double isl = static_cast<double>(w.isl), osl = static_cast<double>(w.osl);
  d.prefill.capacity_rps = ep.tokens_per_s / isl;
  d.decode.capacity_rps = ed.tokens_per_s / osl;
  d.link = Link(gp, gd);
  d.kv_transfer_s = KvTransferSeconds(d.link, kv_bytes_);
  // The prefill pool's TTFT holds the engine's request overhead, which no transfer overlaps.
  d.request_overhead_s = PrefillSim(gp).RequestOverheadS();
  d.prefill_s = ep.ttft_s - d.request_overhead_s;
  d.kv_exposed_s = ExposedTransfer(d.kv_transfer_s, d.prefill_s);
  d.decode_step_s = ed.tpot_s * ed.accept;
  d.ttft_s = ep.ttft_s + d.kv_exposed_s + d.decode_step_s;
  d.tpot_s = ed.tpot_s;
  const double link_per_gpu =
      kv_bytes_ > 0 ? d.link.bw / kv_bytes_ : std::numeric_limits<double>::infinity();
  Counts c;
  if (!BestCounts(gp, d.prefill.capacity_rps, gd, d.decode.capacity_rps, link_per_gpu, &c)) {
    d.verdict = Verdict::kStructure;
    d.reason = setup_.shared
                   ? fmt::format("a {}-GPU prefill and a {}-GPU decode instance need {} GPUs, the "
                                 "cluster has {}",
                                 gp, gd, gp + gd, setup_.prefill_pool.num_gpus)
                   : fmt::format("a {}-GPU prefill instance needs pool {} of {} GPUs and a {}-GPU "
                                 "decode instance pool {} of {}",
                                 gp, setup_.prefill_pool_name, setup_.prefill_pool.num_gpus, gd,
                                 setup_.decode_pool_name, setup_.decode_pool.num_gpus);
    return d;
  }
  d.prefill.instances = c.np;
  d.decode.instances = c.nd;
  d.rate_rps = c.rate;
  d.link_rps = c.link_rps;
  d.prefill.spare = 1 - c.rate / (c.np * d.prefill.capacity_rps);
  d.decode.spare = 1 - c.rate / (c.nd * d.decode.capacity_rps);
  d.bottleneck = c.rate >= c.link_rps ? "kv link"
                 : d.prefill.spare <= d.decode.spare ? "prefill"
                                                     : "decode";
  d.gpus_used = c.np * gp + c.nd * gd;
  d.tokens_per_s = c.rate * osl;
  d.tokens_per_s_per_gpu = d.tokens_per_s / setup_.total_gpus;
  if (w.ttft_ms > 0 && d.ttft_s * 1e3 > w.ttft_ms) {
    d.verdict = Verdict::kTtft;
    d.reason = fmt::format(
        "TTFT {:.1f} ms ({}prefill {:.1f} + KV transfer {:.2f} + decode step {:.2f}) exceeds the "
        "SLO of {} ms",
        d.ttft_s * 1e3,
        d.request_overhead_s > 0
            ? fmt::format("request overhead {:.1f} + ", d.request_overhead_s * 1e3)
            : std::string(),
        d.prefill_s * 1e3, d.kv_exposed_s * 1e3, d.decode_step_s * 1e3, w.ttft_ms);
    return d;
  }
  d.verdict = Verdict::kValid;
  return d;
}

DisaggEvaluation DisaggModel::Evaluate(int gp, const Strategy& sp, int gd,
                                       const Strategy& sd) const {
  const Evaluation ep = PrefillSim(gp).Evaluate(sp);
  const Evaluation ed = DecodeSim(gd).Evaluate(sd);
  return Combine(gp, sp, ep, gd, sd, ed);
}

}  // namespace l2s
