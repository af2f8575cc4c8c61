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
  bool from_auto = false;         // --serving auto planned aggregated serving under the traffic
};

// Before the search: splits --slo (the steady-state keys stay in f->slo), checks that a
// percentile key comes with a traffic and a traffic with a percentile key, sets --mode serve
// when no mode is given (any other mode is an error), and rejects --pareto (`serving` "auto"
// becomes "agg"; "disagg" stays: FinishTrafficPlanDisagg). Errors are one line naming the flags.
StatusOr<TrafficPlan> PrepareTrafficPlan(ProblemFlags* f, const TrafficFlags& traffic,
                                         uint64_t seed, bool pareto, std::string* serving);

// After the aggregated plan: its candidates (the recommended strategy and every strategy its runs
// evaluated, those `admissible` accepts), each with its batch halvings, simulated under the
// traffic best first; `plan_json` (the steady-state plan's JSON) gets "best" replaced by the
// pick with "serve" (serve::SummaryJson), the steady-state best kept as "steady_state_best", and
// "traffic". Figures are under `sim`'s engine (its Workload::engine_factor). `instances` > 1:
// the plan is that many replicas of `sim`'s instance (cli/plan_replicas.h), the traffic routed
// over them by the front end's router (plan::FrontEndRouter of `engine`, unless --router says);
// `deployment` is the problem on every GPU (the text's header). Prints JSON or text; returns
// the exit code (1 when no candidate meets the SLOs).
int FinishTrafficPlan(const TrafficPlan& t, const Simulator& sim, const plan::AggPlan& o,
                      const std::function<bool(const Strategy&)>& admissible,
                      int max_running, int instances,
                      const std::string& engine, const Problem& deployment,
                      nlohmann::ordered_json plan_json, bool json_out,
                      const std::string& out_path);

// After the disaggregated plan `d` (one GPU type): its deployment (np prefill and nd decode
// instances of the recommended strategies) at the decode instances' batch and its halvings as the
// decode pool's max running requests, simulated under the traffic (ServeSim::MakeDisagg) in that
// order; the first meeting every SLO is the pick. `plan_json` gets "best" replaced by the pick
// (the steady-state best kept as "steady_state_best", the pick's "serve" summary, "prefill" /
// "decode" strategies and instances) and "traffic". Returns the exit code (1: none meets them).
int FinishTrafficPlanDisagg(const TrafficPlan& t, const Problem& serve, const plan::DisaggPlan& d,
                            nlohmann::ordered_json plan_json, bool json_out,
                            const std::string& out_path);

}  // namespace l2s::cli
