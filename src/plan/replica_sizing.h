// Sizing an aggregated plan into replicas (plan/replicas.h) the way `l2s plan` plans: each
// instance size is planned as the plan itself would plan it - the engines' table without an
// engine, engine E's plan with one (both exact on their small spaces where the oracle finishes),
// the searcher on the unrestricted space for the ideal engine (its baselines and oracle run on
// the chosen size only) - and the best tokens/s per GPU wins. The CLI (cli/plan_replicas.h) formats the result; docs/PLAN.md
// "Replicas".
#pragma once

#include <optional>

#include "common/status.h"
#include "engine/engine.h"
#include "plan/aggregated.h"
#include "plan/engines.h"
#include "plan/progress.h"
#include "plan/replicas.h"

namespace l2s::plan {

struct ReplicaSizing {
  bool active = false;  // the plan is sized into instances (else one over every GPU)
  bool fixed = false;   // the caller gave the size
  ReplicaChoice choice; // replicas, gpus_per_instance and the trials
  // Whose layout each trial is, for the table's header: "the fastest engine's" (tabulate),
  // "vLLM's" (an engine), "the unrestricted search's" (kIdeal).
  std::string layouts_of;
  // The chosen size's plan as sized, for the caller to reuse: the engines' table (tabulate) or
  // E's plan (an engine); neither for the ideal engine.
  std::optional<EngineTable> table;
  std::optional<EnginePlan> engine_plan;
};

// Sizes the aggregated plan of `full` (the problem on every GPU) for engine `id` (kIdeal: the
// unrestricted plan; `tabulate`: no engine named, the engines' table decides). `instance_gpus`
// > 0 fixes the size: InvalidArgument "<g>: <n> GPUs in NVLink domains of <d> split into
// instances of 1, 2, ... GPUs" (the caller prefixes its flag) when the cluster does not tile into
// it. Otherwise MoE models only (a dense model's dp ranks are replicas in its space already):
// inactive for the others and for one-size clusters. Errors: the plans' (Cancelled when
// interrupted).
StatusOr<ReplicaSizing> SizeAggregatedReplicas(const Problem& full, engine::EngineId id,
                                               bool tabulate, int instance_gpus,
                                               const AggRequest& req, int mtp,
                                               const PlanProgress& progress = {});

}  // namespace l2s::plan
