// `l2s plan` with a traffic (docs/CAPACITY.md "plan with a traffic"): --slo keys with a statistic
// prefix (p99_ttft_ms=2000) are percentile SLOs of a request-level simulation of the traffic
// flags (cli/workload_flags.h, those of `l2s capacity`); the plan is the best steady-state
// candidate (tokens/s per GPU) whose simulation meets them (serve/slo_pick.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/problem_flags.h"
#include "cli/workload_flags.h"
#include "common/status.h"
#include "plan/aggregated.h"
#include "plan/disaggregated.h"
#include "serve/slo_pick.h"
#include "serve/stats.h"
#include "sim/simulator.h"

namespace l2s::cli {

struct TrafficPlan {
  bool active = false;            // percentile SLOs and a traffic given
  std::vector<serve::Slo> slos;   // the percentile keys
  std::string slo_text;           // as given (percentile keys only)
  TrafficFlags traffic;
  uint64_t seed = 0;
};

// Before the search: splits --slo (the steady-state keys stay in f->slo), checks that a
// percentile key comes with a traffic and a traffic with a percentile key, sets --mode serve
// when no mode is given (any other mode is an error), and rejects --pareto. Every --serving
// takes a traffic: agg and disagg simulate that serving's plan, auto both. Errors are one line
// naming the flags.
StatusOr<TrafficPlan> PrepareTrafficPlan(ProblemFlags* f, const TrafficFlags& traffic,
                                         uint64_t seed, bool pareto);

// One serving's plan under the traffic: what the command prints of it, and its launch files.
struct TrafficPick {
  bool found = false;
  std::string failure;       // !found: why no candidate is the plan (one line)
  std::string serving;       // "agg" or "disagg"
  std::string problem;       // the deployment in words (ProblemSummary)
  std::string title;         // the first line's serving words ("disaggregated serving, ")
  std::string traffic_text;  // the stream simulated, in words
  size_t requests = 0;       // ... its requests
  std::string body;          // text: the deployment's lines and the table of what was simulated
  std::string pick;          // text (found): the pick and its percentiles
  double tokens_per_s_per_gpu = 0;  // the pick's steady state (found), at its running limit
  nlohmann::ordered_json best, traffic;  // the plan JSON's "best" and "traffic" (found)
  // The serving's steady-state plan (JSON "steady_state_best"; null: the plan JSON's "best").
  nlohmann::ordered_json steady_state_best;
  // The pick's launch commands (the plan JSON's "launch"): each engine's translation of it at
  // the running limit it was picked at, as the steady-state plan's are of that plan.
  nlohmann::ordered_json launch;
  // The pick's launch files (launch/emit.h EmitSized*) into a directory, on the engine it was
  // planned for, each server admitting what the simulated one did; the line for the user.
  std::function<StatusOr<std::string>(const std::string& dir, const std::string& model_id)> emit;
};

// After the aggregated plan: its candidates (the recommended strategy and every strategy its runs
// evaluated, those `admissible` accepts), each with its batch halvings, simulated under the
// traffic best first; the pick is the first meeting every SLO. Figures are under `sim`'s engine
// (its Workload::engine_factor). `instances` > 1: the plan is that many replicas of `sim`'s
// instance (cli/plan_replicas.h), the traffic routed over them by the front end's router
// (plan::FrontEndRouter of `engine`, unless --router says); `deployment` is the problem on every
// GPU. A default stream that the pick (else the steady-state best) ran as a burst is drawn again
// longer (SteadyStream), up to twice. Errors: the traffic's (a trace that cannot be read).
StatusOr<TrafficPick> PlanAggUnderTraffic(const TrafficPlan& t, const Simulator& sim,
                                          const plan::AggPlan& o,
                                          const std::function<bool(const Strategy&)>& admissible,
                                          int max_running, int instances,
                                          const std::string& engine, const Problem& deployment);

// After the disaggregated plan `d` (one GPU type): its deployment (np prefill and nd decode
// instances of the recommended strategies) at the decode instances' batch and its halvings as the
// decode pool's max running requests, simulated under the traffic (ServeSim::MakeDisagg) in that
// order; the first meeting every SLO is the pick, its steady state the pair's at that decode
// batch on the same instances. The stream is drawn again as above. `engine` is the one the pools
// were planned for (--engine's spelling; "" the unrestricted pools).
StatusOr<TrafficPick> PlanDisaggUnderTraffic(const TrafficPlan& t, const Problem& serve,
                                             const plan::DisaggPlan& d, const std::string& engine);

// Where a traffic plan goes: --json, --out, --emit and --model-id; `engine_line`: the text's line
// naming the engine the plan is for (after the traffic line; "" = none).
struct TrafficOutput {
  bool json = false;
  std::string out_path, emit_dir, model_id, engine_line;
};

// Prints one serving's pick: `plan_json` (the steady-state plan's JSON) gets "best" replaced by
// the pick (the steady-state best kept as "steady_state_best") and "traffic"; --emit writes the
// pick's launch files. Returns the exit code (1 when no candidate meets the SLOs).
int FinishTrafficPlan(const TrafficPlan& t, const TrafficPick& pick, nlohmann::ordered_json plan_json,
                      const TrafficOutput& out);

// --serving auto: both servings' picks (a serving that could not be planned is an error status),
// the one with the higher steady-state tokens/s per GPU at its pick is the plan ("best", with
// "serving"; the other's pick under "baselines"), both tables printed. Exit 1 with both reasons
// when neither meets the SLOs.
int FinishTrafficAuto(const TrafficPlan& t,
                      const StatusOr<TrafficPick>& agg, const StatusOr<TrafficPick>& disagg,
                      nlohmann::ordered_json plan_json, const TrafficOutput& out);

}  // namespace l2s::cli
