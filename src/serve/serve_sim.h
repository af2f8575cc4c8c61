// Request-level serving simulator (docs/CAPACITY.md): discrete events for arrivals, scheduling
// steps and completions of one or more instances of a deployment, each step priced by StepCost
// (serve/step_cost.h) memoised by batch shape. Each instance runs its engine's scheduler:
//   vLLM (V1)     one token budget per step (max_num_batched_tokens) filled by running requests
//                 first (decodes, then unfinished prompt chunks) and then waiting requests (FCFS,
//                 chunked prefill); KV blocks allocated as tokens arrive; when the pool is full the
//                 most recently admitted request is preempted and recomputed later
//   TensorRT-LLM  the same mixed steps under max_num_tokens, with GUARANTEED_NO_EVICT admission:
//                 a request is admitted only when KV for its whole prompt + output is free (no
//                 preemption)
//   SGLang        prefill steps apart from decode steps (a step prefills up to chunked_prefill_size
//                 tokens of waiting requests when any can be admitted, else decodes every running
//                 request); admission reserves the prompt plus new_token_ratio x the remaining
//                 outputs; on a full pool the most recently admitted request is retracted
//                 (with --scheduler-recv-interval, new requests are received only every that
//                 many decode steps: ServeOptions::sglang_recv_interval)
//   ideal         vLLM's policy without a token budget
// max running requests per rank (engine default max_batch unless given), prefix-cache hits
// (cached prompt tokens are not prefilled but hold KV), MTP (1 + mtp query tokens per decoding
// request per step, StepCost::accept() tokens emitted on average). Attention-DP ranks of an
// instance step in lockstep, each with its own queue; requests go to a rank round-robin
// (SGLang's default) or to the one with the fewest requests (TensorRT-LLM, vLLM); instances
// get requests from a router (fewest outstanding requests, or round-robin).
//
// Disaggregated serving (MakeDisagg): a prefill pool and a decode pool in the same event loop. A
// request is routed to a prefill instance, which runs the engine's scheduler on prefill work only
// (chunks under the token budget, admission for the prompt's KV alone). Every engine allocates
// the prompt's KV on the decode instance before its transfer starts, and the prefill instance
// holds the prompt's KV until the transfer has ended:
//   SGLang        the decode instance (picked at arrival) pre-allocates the prompt's KV before the
//                 prefill may start (its PreallocQueue; the prefill server's bootstrap queue waits
//                 for it): a request slot (max running, plus 2 x max running when that is <= 32)
//                 and prompt + reserved_decode_tokens (512) within the free KV less 512 per
//                 request it already holds, and prompt + min(output, 4096) within it plus the
//                 running requests' KV (retractable); then the prefill, the transfer, and at the
//                 decode instance's next scheduling point (max running permitting) the request
//                 joins the batch and its first token is streamed (the "prebuilt" batch), before
//                 that step runs
//   TensorRT-LLM  after the prefill the decode instance admits the generation request (KV for
//                 prompt + output reserved, GUARANTEED_NO_EVICT; max running counts it), then the
//                 transfer; the step that first decodes it returns the context server's token and
//                 its own together (TTFT = the end of that step)
//   vLLM, ideal   after the prefill the decode instance allocates the prompt's blocks (max running
//                 not yet full) and pulls the KV; the prefill's token is not streamed: the first
//                 decode step recomputes the last prompt position and emits the first token
// Allocation happens at the decode instance's scheduling points (step boundaries, or at once
// when idle), FIFO per rank. The transfers of a decode instance form a FIFO served by
// `kv_channels` links in parallel (one per decode GPU by default), each lasting
// KvTransferSeconds(link, KV bytes of the prompt) (sim/disagg.h, the static model's formula;
// layerwise: only ExposedKvTransfer when it starts at the prefill's end). A full decode pool thus
// holds requests back: their KV stays on the prefill instance, which admits less (TensorRT-LLM,
// vLLM), or their prefill does not start (SGLang). A preempted request is recomputed on the
// decode instance, as the engine does.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "serve/step_cost.h"
#include "sim/disagg.h"
#include "serve/workload.h"

namespace l2s::serve {

enum class Assign : uint8_t { kEngineDefault, kRoundRobin, kShortestQueue };
const char* AssignName(Assign a);
bool ParseAssign(const std::string& s, Assign* out);  // "default", "round-robin", "shortest-queue"

struct ServeOptions {
  int instances = 1;                 // identical instances behind the router
  Assign rank_assign = Assign::kEngineDefault;  // attention-DP: request -> rank
  Assign router = Assign::kShortestQueue;       // request -> instance (kEngineDefault: as
                                                // kShortestQueue; plan::FrontEndRouter resolves it)
  int max_running = 0;               // per rank; 0 = the engine's max_batch (EngineDefaults)
  int64_t kv_capacity_tokens = -1;   // per rank; -1 = StepCost::KvCapacityTokens
  double sglang_new_token_ratio = 0.7;  // SGLang's init_new_token_ratio (admission reserve)
  // SGLang's --scheduler-recv-interval (default 1): the scheduler takes new requests from its
  // socket only when a counter reaches this value. The counter grows by 1 per decode step and by
  // 1,000 per step that prefills (so it receives right after one), and restarts at 0 on each
  // receive; an idle scheduler receives at once. A request that arrives while the server decodes
  // thus waits up to `interval` decode steps before it is seen (SGLang's SchedulerRecvSkipper,
  // default weights). Disaggregated: every server receives so; a prefill server's steps all
  // prefill, so the decode servers' pre-allocation is what waits.
  int sglang_recv_interval = 1;
  int shape_steps_per_octave = 64;   // memo key resolution (>= 1): a shape is priced at its
                                     // value rounded to 2^(1/N) steps above 64 (1/4 below)
  int64_t max_steps = 50'000'000;    // work limit: steps simulated before giving up
  // Early stop of a run (capacity's sizing sets it from its TTFT percentile SLOs): the run stops
  // once so many requests are certain to have a TTFT above `limit_s` (each waited longer than
  // that for its first token since it was sent: its arrival, or in a closed loop when its client
  // sent it) that the `quantile` of the TTFTs (stats.h Quantile, over all n requests) exceeds
  // the limit whatever the rest does: n - floor(quantile (n - 1)) of them. The run is then
  // unstable with the reason. Empty: every run goes to its end.
  struct TtftStop {
    double limit_s = 0;
    double quantile = 0.99;  // in [0, 1]
  };
  std::vector<TtftStop> ttft_stops;
  int timeline_points = 400;         // samples kept for the picture (>= 2)
};

// The prefill pool and the KV link of a disaggregated deployment (ServeSim::MakeDisagg; the
// ServeOptions' instances, max_running and kv_capacity_tokens describe the decode pool).
struct DisaggServeOptions {
  int prefill_instances = 1;
  int prefill_max_running = 0;            // per rank; 0 = the engine's max_batch
  int64_t prefill_kv_capacity_tokens = -1;  // per rank; -1 = StepCost::KvCapacityTokens(isl, isl)
  Assign prefill_router = Assign::kShortestQueue;  // request -> prefill instance
  KvLink link;                            // one GPU's link between the pools (bw > 0)
  bool layerwise = false;                 // transfer pipelined with the prefill (ExposedKvTransfer)
  int kv_channels = 0;                    // transfers in flight per decode instance; 0 = its GPUs
  // SGLang's decode pre-allocation: SGLANG_NUM_RESERVED_DECODE_TOKENS (default 512) reserved per
  // request held, SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION (default 4096) caps the output estimate.
  int64_t sglang_reserved_decode_tokens = 512;
  int64_t sglang_clip_max_new_tokens = 4096;
};

// One request's outcome.
struct RequestOutcome {
  double arrival_s = 0, first_token_s = -1, finish_s = -1;
  double engine_s = -1;  // when it reached the engine: arrival + the request overhead
                         // (Simulator::RequestOverheadS)
  int64_t prompt = 0, output = 0;
  int preemptions = 0;
  double kv_ready_s = -1;  // disaggregated: when its KV reached the decode instance
  double prefill_end_s = -1;  // disaggregated: when its prefill ended (its KV then waits for the
                              // decode instance's allocation and the link: kv_ready_s - this)
  double kv_alloc_s = -1;     // disaggregated: when the decode instance allocated its KV (SGLang:
                              // before the prefill)
  bool done() const { return finish_s >= 0; }
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  // (finish - first token) / (output - 1); 0 for single-token outputs.
  double tpot_s() const { return output > 1 ? (finish_s - first_token_s) / (output - 1) : 0.0; }
};

struct TimelinePoint {
  double t_s = 0;
  int64_t waiting = 0, running = 0;
  double kv_fraction = 0;  // KV tokens held / capacity, over all ranks
  int64_t transferring = 0;  // disaggregated: KV transfers queued or in flight
};

// Log-binned histogram of positive values (0.5% bins from 1 us to 10^4 s) for percentiles of
// per-token figures, of which there are too many to keep.
class LogHistogram {
 public:
  void Add(double x, double weight = 1);
  double Quantile(double q) const;  // bin centre; 0 when empty
  double Mean() const { return w_ > 0 ? sum_ / w_ : 0; }
  double Count() const { return w_; }

 private:
  std::vector<double> bins_;
  double w_ = 0, sum_ = 0;
  double last_x_ = -1;  // the last value added and its bin (a step's requests add the same gap)
  int last_b_ = 0;
};

struct ServeRun {
  std::vector<RequestOutcome> requests;  // in send order
  LogHistogram itl;                      // inter-token gaps (one per emission; MTP bursts count once)
  std::vector<TimelinePoint> timeline;
  int64_t steps = 0;                     // scheduling steps simulated (all instances)
  int64_t cost_calls = 0;                // distinct step shapes priced (StepCost calls)
  int64_t kv_capacity_tokens = 0;        // per rank
  int max_running = 0;                   // per rank
  double request_overhead_s = 0;         // each request's wait before the engine (engine_s)
  int recv_interval = 1;                 // ServeOptions::sglang_recv_interval in force
  int ranks = 1, instances = 1;          // simulated: a dense model's dp replicas are instances
  bool finished = true;                  // false: max_steps reached
  // Open loop: the waiting queue grew through the arrivals (the offered load is above what the
  // deployment serves); percentiles of such a run describe its length, not the deployment.
  bool unstable = false;
  std::string unstable_reason;
  double makespan_s = 0;                 // first arrival to last completion
  bool closed_loop = false;
  // Disaggregated runs: the prefill pool (the fields above describe the decode pool) and each
  // pool's stepping seconds summed over its instances (aggregated runs: decode_busy_s only).
  bool disaggregated = false;
  int prefill_instances = 0, prefill_ranks = 0, prefill_max_running = 0;
  int64_t prefill_kv_capacity_tokens = 0;
  double prefill_busy_s = 0, decode_busy_s = 0;
  // ... and the requests queued in each pool when the last request arrived (open loop; at the end
  // of a run stopped before it): prefill, waiting for a prefill step; decode, waiting for a decode
  // instance's KV allocation or to join its batch. Where an overloaded pair's queue builds.
  int64_t prefill_queued = 0, decode_queued = 0;
};

// The pools of a deployment: one aggregated pool (ServeSim::Make), or a prefill and a decode pool
// (ServeSim::MakeDisagg).
enum class PoolKind : uint8_t { kAggregated, kPrefill, kDecode };

// KV-cache tokens one attention-dp rank of `cost`'s layout holds in a pool of `kind` built at
// these nominal lengths (without a capacity override), as Make and MakeDisagg size it:
// StepCost::KvCapacityTokens at the held context (prompt + output; a prefill rank, the prompt)
// and the prompt. 0 when the weights alone do not fit.
int64_t RankKvTokens(const StepCost& cost, PoolKind kind, int64_t nominal_isl, int64_t nominal_osl);
// The KV tokens request `r` takes on one rank of a pool of `kind` (a prefill rank: its prompt;
// else its prompt and output): the engine refuses it where this exceeds the rank's KV.
int64_t RankKvNeed(const RequestSpec& r, PoolKind kind);

class ServeSim {
 public:
  // `cost` prices steps (owned by the caller, outlives the sim; its memo lives here and is kept
  // between Runs, so that runs at several rates share it). Errors: bad options.
  static StatusOr<std::unique_ptr<ServeSim>> Make(const StepCost* cost, const ServeOptions& opt,
                                                  int64_t nominal_isl, int64_t nominal_osl);
  // Disaggregated: `prefill` prices the prefill instances' steps, `decode` the decode instances'
  // (`opt` sets the decode pool, `d` the prefill pool and the link). The KV bytes of a prompt are
  // KvBytesForSequence of the decode problem's model and KV dtype, plus DraftKvBytesForSequence
  // when the decode strategy speculates. Errors: bad options, no KV room.
  static StatusOr<std::unique_ptr<ServeSim>> MakeDisagg(const StepCost* prefill,
                                                        const StepCost* decode,
                                                        const ServeOptions& opt,
                                                        const DisaggServeOptions& d,
                                                        int64_t nominal_isl, int64_t nominal_osl);

  // Open loop (concurrency == 0): requests arrive at their arrival_s. Closed loop: the first
  // `concurrency` requests are sent at 0 and each completion sends the next one at once.
  ServeRun Run(const std::vector<RequestSpec>& requests, int concurrency = 0);

  // A request larger than a rank's whole KV pool, which the engine refuses whatever the instance
  // counts: aggregated, its prompt + output over the rank's KV; disaggregated, its prompt over a
  // prefill rank's or its prompt + output over a decode rank's.
  bool TooBig(const RequestSpec& r) const;
  // How many of `requests` are TooBig; when some are and `why` is not null, one line saying how
  // many need more KV than which pool's rank holds.
  int64_t Refused(const std::vector<RequestSpec>& requests, std::string* why) const;

  // The decode pool's (the only pool's when aggregated) per-rank KV and max running requests.
  int64_t kv_capacity_tokens() const { return pools_.back().kv_cap; }
  int max_running() const { return pools_.back().max_running; }
  bool disaggregated() const { return pools_.size() == 2; }
  int64_t memo_size() const;
  // Seconds of one step at a rank shape of the (decode) pool, memoised as Run prices it.
  double StepSeconds(const RankShape& busiest, const RankShape& mean) {
    return PoolStepTimes(static_cast<int>(pools_.size()) - 1, busiest, mean).round_s;
  }
  // ... of the prefill pool (the only pool when aggregated).
  double PrefillStepSeconds(const RankShape& busiest, const RankShape& mean) {
    return PoolStepTimes(0, busiest, mean).round_s;
  }

 private:
  class Runner;  // one Run's state and scheduler (serve_run.cc)
  using Role = PoolKind;
  ServeSim(const ServeOptions& opt) : opt_(opt) {}
  struct Key {
    std::array<int32_t, 8> q{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  int32_t Quantise(double x) const;
  double Dequantise(int32_t q) const;

  // One pool of identical instances: the only one (aggregated), or prefill then decode.
  // A model without MoE layers has no collective wider than a tp group (Simulator::SyncRanks):
  // its dp ranks are independent replicas that never wait for each other, so each is simulated
  // on its own clock (replicas = dp, ranks = 1), as dp instances of one configured instance.
  struct Pool {
    const StepCost* cost = nullptr;
    Role role = Role::kAggregated;
    int instances = 1;  // simulated instances: the configured ones x replicas
    int replicas = 1;   // independent ranks per configured instance
    int ranks = 1;      // attention-dp ranks that step together in one simulated instance
    int64_t kv_cap = 0;
    int max_running = 0;
    Assign router = Assign::kShortestQueue;
    std::unordered_map<Key, StepCost::Times, KeyHash> memo;
  };
  static StatusOr<Pool> MakePool(const StepCost* cost, Role role, int instances, int max_running,
                                 int64_t kv_capacity, Assign router, int64_t nominal_isl,
                                 int64_t nominal_osl);
  StepCost::Times PoolStepTimes(int pool, const RankShape& busiest, const RankShape& mean);

  ServeOptions opt_;
  DisaggServeOptions dis_;
  Engine engine_ = Engine::kIdeal;
  std::vector<Pool> pools_;
  int64_t calls_ = 0;
};

}  // namespace l2s::serve
