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
//   ideal         vLLM's policy without a token budget
// max running requests per rank (engine default max_batch unless given), prefix-cache hits
// (cached prompt tokens are not prefilled but hold KV), MTP (1 + mtp query tokens per decoding
// request per step, StepCost::accept() tokens emitted on average). Attention-DP ranks of an
// instance step in lockstep, each with its own queue; requests go to a rank round-robin
// (SGLang's default) or to the one with the fewest requests (TensorRT-LLM, vLLM); instances
// get requests from a router (fewest outstanding requests, or round-robin).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "serve/step_cost.h"
#include "serve/workload.h"

namespace l2s::serve {

enum class Assign : uint8_t { kEngineDefault, kRoundRobin, kShortestQueue };
const char* AssignName(Assign a);
bool ParseAssign(const std::string& s, Assign* out);  // "default", "round-robin", "shortest-queue"

struct ServeOptions {
  int instances = 1;                 // identical instances behind the router
  Assign rank_assign = Assign::kEngineDefault;  // attention-DP: request -> rank
  Assign router = Assign::kShortestQueue;       // request -> instance
  int max_running = 0;               // per rank; 0 = the engine's max_batch (EngineDefaults)
  int64_t kv_capacity_tokens = -1;   // per rank; -1 = StepCost::KvCapacityTokens
  double sglang_new_token_ratio = 0.7;  // SGLang's init_new_token_ratio (admission reserve)
  int shape_steps_per_octave = 64;   // memo key resolution (>= 1): a shape is priced at its
                                     // value rounded to 2^(1/N) steps above 64 (1/4 below)
  int64_t max_steps = 50'000'000;    // work limit: steps simulated before giving up
  int timeline_points = 400;         // samples kept for the picture (>= 2)
};

// One request's outcome.
struct RequestOutcome {
  double arrival_s = 0, first_token_s = -1, finish_s = -1;
  int64_t prompt = 0, output = 0;
  int preemptions = 0;
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
};

struct ServeRun {
  std::vector<RequestOutcome> requests;  // in send order
  LogHistogram itl;                      // inter-token gaps (one per emission; MTP bursts count once)
  std::vector<TimelinePoint> timeline;
  int64_t steps = 0;                     // scheduling steps simulated (all instances)
  int64_t cost_calls = 0;                // distinct step shapes priced (StepCost calls)
  int64_t kv_capacity_tokens = 0;        // per rank
  int max_running = 0;                   // per rank
  int ranks = 1, instances = 1;
  bool finished = true;                  // false: max_steps reached
  // Open loop: the waiting queue grew through the arrivals (the offered load is above what the
  // deployment serves); percentiles of such a run describe its length, not the deployment.
  bool unstable = false;
  std::string unstable_reason;
  double makespan_s = 0;                 // first arrival to last completion
  bool closed_loop = false;
};

class ServeSim {
 public:
  // `cost` prices steps (owned by the caller, outlives the sim; its memo lives here and is kept
  // between Runs, so that runs at several rates share it). Errors: bad options.
  static StatusOr<std::unique_ptr<ServeSim>> Make(const StepCost* cost, const ServeOptions& opt,
                                                  int64_t nominal_isl, int64_t nominal_osl);

  // Open loop (concurrency == 0): requests arrive at their arrival_s. Closed loop: the first
  // `concurrency` requests are sent at 0 and each completion sends the next one at once.
  ServeRun Run(const std::vector<RequestSpec>& requests, int concurrency = 0);

  int64_t kv_capacity_tokens() const { return kv_cap_; }
  int max_running() const { return max_running_; }
  int64_t memo_size() const { return static_cast<int64_t>(memo_.size()); }
  // Seconds of one step at a rank shape (memoised as Run prices it).
  double StepSeconds(const RankShape& busiest, const RankShape& mean);

 private:
  ServeSim(const StepCost* cost, const ServeOptions& opt);
  struct Key {
    std::array<int32_t, 8> q{};
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  int32_t Quantise(double x) const;
  double Dequantise(int32_t q) const;

  const StepCost* cost_;
  ServeOptions opt_;
  Engine engine_ = Engine::kIdeal;
  int64_t kv_cap_ = 0;
  int max_running_ = 0;
  std::unordered_map<Key, double, KeyHash> memo_;
  int64_t calls_ = 0;
};

}  // namespace l2s::serve
