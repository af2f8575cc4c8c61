// `l2s plan`'s aggregated replicas (plan/replicas.h, docs/PLAN.md "Replicas"): an MoE model's
// aggregated plan sized as R independent instances of g GPUs behind a router, the size chosen by
// planning each size as the plan itself plans (the engines' table without --engine, E's plan with
// --engine E, the unrestricted plan with --engine ideal); --instance-gpus N fixes the size.
// CLI-only: the sizing's flags, text and JSON.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "engine/engine.h"
#include "launch/launch.h"
#include "plan/aggregated.h"
#include "plan/engines.h"
#include "plan/replica_sizing.h"
#include "plan/replicas.h"

namespace l2s::cli {

using plan::ReplicaSizing;

// plan::SizeAggregatedReplicas with --instance-gpus' errors named by the flag.
StatusOr<ReplicaSizing> SizeReplicas(const Problem& full, engine::EngineId id, bool tabulate,
                                     int instance_gpus, const plan::AggRequest& req, int mtp,
                                     const plan::PlanProgress& progress);

// The sizes' table for the plan's text (after the header), "" when inactive:
//   Instance size (...)
//     GPUs/instance  instances  tokens/s/GPU  layout
//   >             8          9        760.20  pp=1,tp=8,...
std::string ReplicaSizingText(const ReplicaSizing& r);

// {"instances", "gpus_per_instance", "gpus", "fixed", "sizes": [{"gpus_per_instance",
// "instances", "planned", "found", "tokens_per_s_per_gpu", "layout", "why_none"}], "router"}.
nlohmann::ordered_json ReplicaSizingJson(const ReplicaSizing& r, const std::string& router);

// The router that spreads requests over `instances` servers of `engine` (their head nodes'
// addresses <instance-i>, the engine's port): sglang-router for SGLang, vllm-router (regular
// mode, an OpenAI reverse proxy) for the others; "" for one instance or Megatron-LM.
std::string ReplicaRouterCommand(launch::Engine engine, int instances);

}  // namespace l2s::cli
