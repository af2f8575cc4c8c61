// Disaggregated prefill/decode serving (docs/dev/COST_MODEL.md "Disaggregated serving"): a
// deployment is a prefill strategy on `np` instances of `gp` GPUs and a decode strategy on `nd`
// instances of `gd` GPUs. Each role is costed by the ordinary Simulator on a problem derived from
// the serve problem (PrefillProblem, DecodeProblem); this file only adds what joins the two:
//   prefill capacity  cp = input tokens/s of one instance / isl        (requests/s)
//   decode capacity   cd = output tokens/s of one instance / osl       (requests/s)
//   KV transfer       bytes = KV of one isl-token prompt (KvBytesForSequence, + the draft's when
//                     speculating) over one GPU's
//                     link between the instances: NVLink when a prefill and a decode instance
//                     fit one NVLink domain of a shared pool, else the scale-out NIC (or the
//                     inter-pool link of a mixed cluster); t = bytes / bw + latency; exposed
//                     fully after the prefill, or (layerwise) only the part the prefill of the
//                     later layers cannot hide
//   TTFT              prefill latency (pp x stage at its batch) + exposed transfer + one decode
//                     step (tpot x tokens per step)
//   rate              min(np cp, nd cd, link rate), the counts chosen to maximise it
//   figure of merit   rate x osl / all GPUs of the cluster (idle ones included)
#pragma once

#include <memory>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "hw/hw.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s {

// One GPU's link a prompt's KV crosses from a prefill to a decode instance.
struct KvLink {
  bool nvlink = false;  // inside one NVLink domain
  double bw = 0;        // bytes/s, one direction
  double latency = 0;   // s
};

// Seconds one transfer of `bytes` of KV takes over `link`: bytes / bw + latency (the formula of
// DisaggModel::Combine and of the request-level simulator's KV-transfer queue, serve/serve_sim.h).
double KvTransferSeconds(const KvLink& link, double bytes);
// The part of a transfer of `transfer_s` left after a prefill of `prefill_s` seconds: all of it,
// or with `layerwise` (layer l's KV leaves while layers l+1..L are prefilled) the last layer's
// share or more when the link is slower than the prefill.
double ExposedKvTransfer(double transfer_s, double prefill_s, int layers, bool layerwise);

// The pools of a disaggregated deployment: which GPUs prefill and which decode.
struct DisaggSetup {
  Problem serve;            // the serve problem (model, isl, osl, SLOs, engine, dtypes)
  ClusterSpec prefill_pool;  // GPUs the prefill role may use (num_gpus = the pool's size)
  ClusterSpec decode_pool;   // GPUs the decode role may use
  bool shared = true;        // one pool serves both roles: np gp + nd gd <= its size
  std::string prefill_pool_name, decode_pool_name;  // mixed clusters: the pools' names
  KvLink cross;              // link between two different pools (mixed clusters)
  int total_gpus = 0;        // every GPU of the cluster: the figure of merit's denominator
  bool layerwise = false;    // KV transfer pipelined with the prefill layer by layer
  // Both roles speculate: the draft's KV cache of the prompt crosses with the model's
  // (DraftKvBytesForSequence; SGLang registers the draft pool beside the target's).
  bool speculating = false;
};

// The setup of a homogeneous cluster: both roles share serve.cluster.
DisaggSetup SharedSetup(const Problem& serve);

// The problem one instance of g GPUs of `pool` solves in each role. Prefill: mode prefill at isl,
// no SLO (the TTFT limit is joint, checked by Combine). Decode: mode decode at the average
// context isl + osl/2 (sequences at uniformly spread progress), reserving isl + osl tokens of KV
// per sequence (no-eviction admission as in serve mode), the TPOT SLO.
StatusOr<Problem> PrefillProblem(const Problem& serve, const ClusterSpec& pool, int g);
StatusOr<Problem> DecodeProblem(const Problem& serve, const ClusterSpec& pool, int g);

// Instance sizes a pool offers: powers of two below one NVLink domain, then whole domains, up to
// the pool's GPUs.
std::vector<int> InstanceSizes(const ClusterSpec& pool);

struct RolePlan {
  Strategy strategy;
  Evaluation eval;           // the role's Simulator evaluation of one instance
  int gpus_per_instance = 0;
  int instances = 0;
  double capacity_rps = 0;   // requests/s of one instance
  double spare = 0;          // fraction of the role's capacity left at the matched rate
};

struct DisaggEvaluation {
  Verdict verdict = Verdict::kStructure;
  bool valid() const { return verdict == Verdict::kValid; }
  std::string reason;        // why invalid ("" when valid)
  RolePlan prefill, decode;
  KvLink link;
  double kv_bytes_per_prompt = 0;
  double kv_transfer_s = 0;  // one prompt's whole transfer
  double kv_exposed_s = 0;   // the part of it in the TTFT
  double decode_step_s = 0;  // one decode step (pp x stage)
  // The engine's request overhead (Simulator::RequestOverheadS of the prefill pool; part of the
  // prefill pool's TTFT, prefill.eval.ttft_s): ttft_s = it + prefill_s + kv_exposed_s +
  // decode_step_s, prefill_s the prefill steps alone.
  double request_overhead_s = 0;
  double prefill_s = 0;
  double ttft_s = 0, tpot_s = 0;
  double link_rps = 0;       // requests/s the KV links carry at these counts
  double rate_rps = 0;       // matched request rate
  double tokens_per_s = 0;   // output tokens/s of the deployment
  double tokens_per_s_per_gpu = 0;  // over every GPU of the cluster
  int gpus_used = 0, total_gpus = 0;
  std::string bottleneck;    // "prefill", "decode" or "kv link"
  // The ordinary Evaluation the searchers compare (verdict, figure of merit, latencies).
  Evaluation AsEvaluation() const;
};

class DisaggModel {
 public:
  // Validates the setup (pool GPU counts, SLOs, serve mode); errors are one line.
  static StatusOr<std::unique_ptr<DisaggModel>> Make(DisaggSetup setup);

  const DisaggSetup& setup() const { return setup_; }
  const std::vector<int>& prefill_sizes() const { return prefill_sizes_; }
  const std::vector<int>& decode_sizes() const { return decode_sizes_; }
  // Simulators of one instance of g GPUs in each role (g from the sizes above), built on first
  // use.
  const Simulator& PrefillSim(int g) const;
  const Simulator& DecodeSim(int g) const;
  // One instance of a role as the request-level simulator prices its steps: the serve problem
  // (the engine's scheduler and token budget) on that role's g GPUs, marked as a pool
  // (Workload::disagg_pool).
  Problem PrefillServeProblem(int g) const;
  Problem DecodeServeProblem(int g) const;

  double KvBytesPerPrompt() const { return kv_bytes_; }
  KvLink Link(int gp, int gd) const;
  // Exposed transfer seconds for a prefill of `prefill_s` seconds.
  double ExposedTransfer(double transfer_s, double prefill_s) const;
  // The longest prefill latency (ms) of a gp-GPU prefill instance that meets the TTFT beside a
  // decode step of `step_ms` on a gd-GPU one: lat + exposed(t, lat) + step <= TTFT solved for
  // lat, t the transfer over Link(gp, gd) (layerwise: min(TTFT - step - t / L,
  // L (TTFT - step - t))). <= 0 when no latency fits; infinite without a TTFT limit.
  double PrefillLatencyLimitMs(int gp, int gd, double step_ms) const;

  // Joins two evaluated instances: counts, rates, TTFT, figure of merit.
  DisaggEvaluation Combine(int gp, const Strategy& sp, const Evaluation& ep, int gd,
                           const Strategy& sd, const Evaluation& ed) const;
  // Evaluates both strategies (batch 0 = the simulator's auto batch) and combines them.
  DisaggEvaluation Evaluate(int gp, const Strategy& sp, int gd, const Strategy& sd) const;

  // Counts maximising the matched rate for per-instance capacities cp, cd (requests/s) and a
  // link carrying link_rps_per_gpu requests/s per GPU of the smaller side; ties keep the fewest
  // prefill instances. Returns false when not even one instance of each fits.
  struct Counts {
    int np = 0, nd = 0;
    double rate = 0, link_rps = 0;
  };
  bool BestCounts(int gp, double cp, int gd, double cd, double link_rps_per_gpu,
                  Counts* out) const;

 private:
  explicit DisaggModel(DisaggSetup setup);
  DisaggSetup setup_;
  std::vector<int> prefill_sizes_, decode_sizes_;
  double kv_bytes_ = 0;
  mutable std::map<int, std::unique_ptr<Simulator>> prefill_sims_, decode_sims_;
};

}  // namespace l2s
