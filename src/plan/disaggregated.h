// The disaggregated plan as a library (`l2s plan --serving disagg|auto`, docs/PLAN.md
// "Disaggregated serving"): the serve problem split into prefill and decode pools, the joint space
// (search/joint.h) searched and solved by its oracle within a work bound, the best deployment
// recommended with its instances' batches refined. The CLI formats it.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "launch/disagg_launch.h"
#include "plan/aggregated.h"
#include "plan/pareto.h"
#include "plan/progress.h"
#include "search/joint.h"
#include "sim/disagg.h"

namespace l2s::plan {

struct DisaggPlanRequest {
  std::string search = "local";  // searcher spec for the joint space
  int64_t budget = 4000;
  uint64_t seed = 0;
  // The oracle's work bound in its simulator calls (aggregated.h kDefaultOracleCalls); 0: no
  // oracle.
  int64_t oracle_calls = kDefaultOracleCalls;
  bool no_baselines = false;   // skips the oracle too
  int prefill_gpus = 0;        // > 0: the user fixes the pool split (prefill GPUs, rest decode)
  bool layerwise = false;      // KV transfer pipelined with the prefill layer by layer
  int mtp = -1;                // --mtp (decode role); -1 = searched 0..3 where the model has MTP
  // Whether the deployment speculates (both roles: a speculating deployment's prefill servers
  // run the draft's extend, Simulator prefill steps with mtp > 0): 1 on, 0 off, -1 open (plan:
  // both joint spaces planned, the better kept; PrepareDisaggregated: on where the decode role's
  // mtp options allow it). Models that cannot speculate ignore it.
  int speculation = -1;
  // --engine E: both roles' spaces restricted to what E launches (engine/restrict.h), answered
  // as the aggregated plan answers E (AggRequest::oracle_first, a portfolio): the joint oracle
  // first, within oracle_calls (kDefaultOracleCalls when 0); where it finishes its optimum is the
  // search (DisaggPlan::searcher_spec "oracle") and the searcher does not run; where it does not,
  // the searcher runs and the oracle is reported "skipped". kIdeal: the unrestricted joint space,
  // searched by `search` beside the oracle within its bound (a comparison).
  engine::EngineId engine = engine::EngineId::kIdeal;
  // A cluster of several GPU pools (hw.h ClusterPools), or null: every assignment is searched
  // (each pool alone serving both roles, and every ordered pair prefill pool -> decode pool).
  const ClusterPools* pools = nullptr;
  // The plan's instances' batches refined between the spaces' options (plan/refine.h; plan's
  // answer). Off: the best deployment on the spaces' batches (the Pareto sweep, whose points are
  // the optimum on the grid under each limit, as the aggregated series').
  bool refine = true;
};

struct DisaggPlan {
  engine::EngineId engine = engine::EngineId::kIdeal;  // the request's (DisaggPlanRequest::engine)
  std::vector<std::unique_ptr<DisaggModel>> models;  // one per pool assignment
  std::unique_ptr<JointSpace> space;
  SearchResult search;          // the searcher's result on the joint space
  // Who searched: "oracle" when the joint oracle was the search (--search oracle, or a named
  // engine's space solved within the bound: DisaggPlanRequest::engine), else the request's spec.
  std::string searcher_spec;
  DisaggEvaluation search_eval;
  bool oracle_ran = false;
  DisaggResult oracle;
  DisaggOracleStats oracle_stats;
  std::string oracle_status = "not run";  // "solved", "skipped" (bound or interrupt), "not run"
  bool oracle_bound_hit = false;  // the oracle stopped by its work bound
  bool found = false;           // the recommended plan (best of search and oracle)
  std::string found_by;         // "search" or "oracle"
  JointSpace::Point best;
  DisaggEvaluation eval;
  // The instances' batches before they were refined (plan/refine.h; 0: not refined).
  int prefill_batch_refined_from = 0, decode_batch_refined_from = 0;
  bool interrupted = false;
  // The joint space's speculation (DisaggPlanRequest::speculation): 1 on, 0 off, -1 the model
  // cannot speculate.
  int speculation = -1;
  // Planned with both speculation settings: the search calls of the other joint space (counted
  // in search.calls too); 0 otherwise. oracle_status is then "solved" only when both joint
  // spaces were.
  int64_t other_speculation_calls = 0;
};

// Which speculation settings a decode role's options leave open: off (mtp 0), on (mtp > 0).
struct SpeculationChoices {
  bool off = false, on = false;
};
SpeculationChoices SpeculationOf(const SpaceOptions& decode);

// A speculating plan's prefill strategies (searched at mtp=1: the prefill price does not depend
// on the depth) given the decode role's depth, as launched: best, eval, the search's and the
// oracle's. No-op otherwise.
void RelabelPrefillDepth(DisaggPlan* d);

// Builds the setups and the joint space only (no search): for `l2s compare --serving disagg`.
StatusOr<DisaggPlan> PrepareDisaggregated(const Problem& serve, const DisaggPlanRequest& req);
// Builds the setups for the serve problem (the pool split when fixed), searches the joint space
// and runs the oracle. Errors: bad split / no valid strategy for a pool (InvalidArgument, one
// line), nothing meets the SLOs (Invalid, one line naming the binding limit).
StatusOr<DisaggPlan> PlanDisaggregated(const Problem& serve, const DisaggPlanRequest& req,
                                      const PlanProgress& progress = {});

// One role of a disaggregated plan in short: "<instances> x <gpus per instance> GPUs: <strategy
// text>".
std::string DisaggRoleText(const RolePlan& r, const Strategy& s);

// The disaggregated series of `l2s plan --pareto` (plan/pareto.h), named "disaggregated": under
// each TPOT limit of `limits` (ms), PlanDisaggregated of `base` with that limit and `req` with
// its refinement off (the best deployment on the spaces' batches, as the aggregated series'
// points are); a limit without a plan is absent. Each point's strategy is "prefill <role>;
// decode <role>" (DisaggRoleText), exact when the oracle solved the joint space. The sweep stops,
// cancelled, once `progress` is interrupted. The limits are planned on `jobs` threads (the same
// series for every `jobs`).
ParetoSeries DisaggregatedParetoSeries(const Problem& base, DisaggPlanRequest req,
                                       const std::vector<double>& limits,
                                       const PlanProgress& progress = {}, int jobs = 1);

// megatron and default build one strategy of one engine's space and have no search of the
// disaggregated (joint) space; the searchers that do are kJointSpaceSearchers (for the one-line
// errors of plan's --search and compare's --searchers).
bool BuildsOneEngineStrategy(const std::string& searcher_name);
inline constexpr const char* kJointSpaceSearchers = "rl, sa, ga, rw or oracle";

// The exact optimum of the joint space as a searcher's result (`--search oracle` in plan,
// "oracle" in compare's --searchers): found, eval, best_encoded, wall time, interruption, note.
SearchResult DisaggOracleAsSearch(const DisaggResult& d);

// Launch commands of the recommended plan for every engine with disaggregated serving that runs
// on the pools' GPUs, built from the plan's two pools (launch/disagg_launch.h): the plan's engine
// first (Dynamo for a Dynamo variant, its workers running that variant's engine), then the
// others in launch::kDisaggEngines order. `decode_max_running` > 0: the decode servers admit that
// many running requests per rank instead of the plan's batch (a traffic's pick, cli/plan_traffic.h).
StatusOr<std::vector<launch::DisaggLaunch>> DisaggLaunches(const DisaggPlan& d,
                                                           int decode_max_running = 0);

}  // namespace l2s::plan
