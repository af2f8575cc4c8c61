// The aggregated plan as a library: one engine serving over every GPU of the problem. A request
// in (searcher spec, budget, seed, the oracle's work bound), a result out (the searcher's run,
// the baselines, the oracle, the recommended strategy and the engines' translations of it); the
// CLI (`l2s plan`), the Python package and sweeps format it. docs/dev/PLANNER.md describes the
// steps.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "launch/launch.h"
#include "plan/progress.h"
#include "plan/refine.h"
#include "search/search.h"
#include "plan/work_bound.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::plan {

// One searcher's run on the plan's problem.
struct Run {
  bool ran = false;
  SearchResult result;
  bool bound_hit = false;         // the oracle stopped by its work bound (AggRequest::oracle_calls)
  EvaluatedStrategies evaluated;  // every distinct valid strategy the run evaluated (refine.h)
};
double Value(const Run& r);  // tokens/s per GPU of its result, 0 when none

// Why nothing is valid: the verdicts of every evaluation of every run and the nearest misses.
struct FailureStats {
  std::array<int64_t, 6> count{};  // by Verdict
  bool have_mem = false, have_tpot = false, have_ttft = false;
  Strategy mem_s, tpot_s, ttft_s;
  Evaluation mem_e, tpot_e, ttft_e;

  void Add(const Strategy& s, const Evaluation& e);
  // One line: the binding limit and the nearest miss ("no strategy meets the TPOT SLO of ...");
  // with misses of both latency SLOs, the pair and the fastest TTFT within the TPOT SLO. The
  // strategies as their degrees (DegreesText: what decides the miss, without the operators' dims).
  std::string Reason(const Problem& p) const;
  // The nearest miss in a few words ("TTFT 152.3 ms", "TPOT 4.518 ms", "TTFT 35.5 ms within the
  // TPOT SLO", "does not fit (137.3 of 80.0 GiB per GPU)"); "" when nothing was evaluated.
  std::string Brief(const Problem& p) const;
  // A latency miss's nearest figure over its limit (> 1); +infinity for any other failure.
  double Over(const Problem& p) const;
};


struct AggRequest {
  std::string search = "local";  // searcher spec (search.h MakeSearcher)
  int64_t budget = 4000;      // the searcher's simulator calls (> 0)
  uint64_t seed = 0;
  bool no_baselines = false;  // no Megatron heuristic, default layout or oracle
  // The oracle's work bound in its simulator calls; 0: no oracle (unless it is the searcher,
  // which then runs unbounded).
  int64_t oracle_calls = kDefaultOracleCalls;
  // The strategies the plan may recommend (null: every valid one). `--engine E` passes
  // engine::Launchable for E beside E's restricted space, so that no candidate E cannot launch -
  // the scan's bests of other engines, their repairs - becomes the plan.
  std::function<bool(const Strategy&)> admissible;
  // A portfolio: the oracle runs first, within oracle_calls (kDefaultOracleCalls when 0); where
  // it finishes its result is the searcher's (searcher_spec "oracle") and the searcher does not
  // run; where it does not, the searcher runs and the oracle is reported "skipped".
  bool oracle_first = false;
};

struct AggPlan {
  std::string searcher_spec;  // canonical, with every option in force
  Run main;                   // the searcher's run
  Run megatron, def, oracle;  // baselines (ran = false when not run)
  std::string oracle_status = "not run";  // "solved", "skipped" (bound or interrupt), "not run"
  bool interrupted = false;
  bool have_recommended = false;
  // Who found the recommended strategy: search, oracle, megatron, default, expressible_scan,
  // engine_repair.
  std::string recommended_source;
  Strategy recommended;
  Evaluation recommended_eval;
  int refined_from = 0;        // its batch before refinement (0: not refined)
  double unrefined_value = 0;  // its tokens/s per GPU at that batch
  bool have_launch = false;
  std::vector<launch::EngineTranslation> launch;  // the engines that run on the problem's GPUs
  FailureStats failures;       // when nothing is valid: failures.Reason(problem)
};

// The runs whose results are the plan's candidates, in tie order, by their found_by names.
inline constexpr const char* kRunSources[] = {"search", "oracle", "megatron", "default"};
// The run of a found_by name (null for the scan and the repairs).
const Run* RunOf(const AggPlan& o, const std::string& source);

// Plans `sim`'s problem on `space`: runs the searcher, the baselines (Megatron heuristic, default
// layout, the oracle within its work bound), the engine-expressible scan, and recommends the best
// valid strategy of everything evaluated - each candidate also at its refined batch, and the
// engines' repairs of it - so the answer is never below a figure it reports. Ties go to the
// searcher, then the oracle, Megatron, default, scan. Errors: a searcher spec MakeSearcher
// rejects (InvalidArgument). Nothing valid is not an error: have_recommended is false and
// `failures` says why.
StatusOr<AggPlan> PlanAggregated(const Simulator& sim, const StrategySpace& space,
                                 const AggRequest& req, const PlanProgress& progress = {});

}  // namespace l2s::plan
