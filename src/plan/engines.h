// What each engine launches at best: the exact optimum of an engine's restricted space
// (engine/restrict.h) under its own scheduler, for `l2s plan`'s table of engines and its
// launchable headline. Restricted spaces are small (10^2-10^4 valid points on the problems of the
// docs), so the oracle solves them within its work bound; where it cannot, the searcher runs on
// the restricted space instead (a portfolio: exact where cheap).
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "launch/launch.h"
#include "plan/aggregated.h"
#include "plan/progress.h"
#include "plan/pareto.h"
#include "sim/simulator.h"

namespace l2s::plan {

struct EnginePlan {
  engine::EngineId id = engine::EngineId::kIdeal;
  Problem problem;           // the problem under the engine's scheduler (what `l2s eval --engine`
                             // of the plan simulates)
  bool found = false;
  Strategy best;             // launchable by the engine as it is
  Evaluation eval;
  bool exact = false;        // the oracle solved the restricted space
  std::string found_by;      // "oracle" or the searcher's spec
  int refined_from = 0;      // the batch before refinement (0: not refined)
  std::string why_none;      // !found: the binding limit, one line
  int64_t evaluations = 0;   // simulator calls spent
  AggPlan plan;              // the whole plan on the engine's space, what
                             // `l2s plan --engine E` prints
  launch::LaunchCommand command;  // found: the engine's command for `best` (memory fractions
                                  // from `eval`), what `l2s eval --engine E` of it prices
};

// The best plan engine `id` launches for problem `p`: PlanAggregated on the space of
// PlanSpaceOptions(p, mtp) restricted to the engine, recommending only what the engine launches,
// with the oracle first (AggRequest::oracle_first: engine spaces are small, 10^2-10^4 valid
// points on the problems of the docs, so the oracle answers within its bound; where it cannot,
// the searcher runs). The scheduler is the engine's (Capabilities::scheduler) unless the problem
// already names one. InvalidArgument when the space options fix a choice the engine lacks;
// Cancelled when the progress observer interrupts.
StatusOr<EnginePlan> PlanForEngine(const Problem& p, engine::EngineId id, const AggRequest& req,
                                   int mtp, const PlanProgress& progress = {});

// `l2s plan`'s aggregated plan on the simulator's problem under engine `id` (the problem
// already carries the engine's scheduler and factor). A serving engine: its plan on `space`
// restricted to what it launches - `given` when the caller has it (the engines' table row or the
// replica sizing's), else PlanForEngine, else (interrupted) the search of the restricted space
// recommending only launchable strategies - and the unrestricted plan on `space` beside it (the
// headroom, `ideal`; absent when interrupted). kIdeal: the unrestricted plan alone. `exact`: the
// engine's oracle solved its space (the plan was found by the oracle, not the searcher).
struct EngineAggPlan {
  AggPlan plan;
  std::optional<AggPlan> ideal;
  bool exact = false;
};
StatusOr<EngineAggPlan> PlanOnEngine(const Simulator& sim, const StrategySpace& space,
                                     engine::EngineId id, std::optional<EnginePlan> given,
                                     const AggRequest& req, int mtp,
                                     const PlanProgress& progress = {});

// The best plan of each engine of TabulatedEngines(p.cluster) (in that order), each under its
// scheduler and its fitted factor (Workload::engine_factor: what `l2s eval --engine E` of the
// plan prints), and the fastest of them: the engine `l2s plan` plans when no --engine is given.
// Engines whose space options fix a choice they lack are left out.
struct EngineTable {
  std::vector<EnginePlan> rows;
  int fastest = -1;          // index into rows of the fastest found plan; -1: none found
  bool interrupted = false;  // the progress observer cancelled a solve: rows are partial
};
StatusOr<EngineTable> PlanEngines(const Problem& p, const AggRequest& req, int mtp,
                                  const PlanProgress& progress = {});
// Index into `rows` of the fastest found plan (tokens/s per GPU; ties: the first), among the
// engines whose disaggregated deployment l2s launches when `disaggregating` (the engine of a
// --serving disagg plan); -1 when none.
int FastestPlan(const std::vector<EnginePlan>& rows, bool disaggregating);

// The TPOT sweep of `l2s plan --pareto` (plan/pareto.h) restricted to what engine `id`
// launches: under each of `limits` (ms), BestAggregatedAtTpot (the oracle within req.oracle_calls,
// else req.search) on engine `id`'s restricted space (engine/restrict.h) under its scheduler (as
// PlanForEngine's problem), on the space's batch grid like the aggregated series, under the
// engine's factor as PlanEngines' rows are. An MoE model's point is the best per
// GPU over the instance sizes `l2s plan` sizes its replicas over (plan/replicas.h; ties to the
// larger), its strategy "Nx <strategy>" when N > 1 instances. Named "<engine title> launchable";
// limits without a launchable plan are absent; `cancelled` when the progress interrupts. The
// limits are searched on `jobs` threads (SweepTpot; progress's observers are then called from
// them); the series is the same for every `jobs`. InvalidArgument when the space options fix a
// choice the engine lacks.
StatusOr<ParetoSeries> EngineParetoSeries(const Problem& p, engine::EngineId id,
                                          const AggRequest& req, int mtp,
                                          const std::vector<double>& limits,
                                          const PlanProgress& progress = {}, int jobs = 1);

// The engines `l2s plan` tabulates when no --engine is given: one per distinct serving engine
// that runs on the cluster's GPUs (engine::RunsOn on its vendor): vLLM, SGLang and TensorRT-LLM on NVIDIA,
// vLLM, SGLang and ATOM on AMD. Dynamo's rows run their backends' workers (the same plans), and
// Megatron-LM has no serving scheduler.
// A single-node engine (ATOM) is left out of a cluster larger than one node
// (engine::CheckCluster).
std::vector<engine::EngineId> TabulatedEngines(const ClusterSpec& cluster);
// "vLLM, SGLang and TensorRT-LLM": the titles of TabulatedEngines(cluster), for sentences.
std::string TabulatedTitles(const ClusterSpec& cluster);

}  // namespace l2s::plan
