// The planning problem shared by `l2s plan`, `l2s compare` and `l2s space`: plan's defaults for
// what the user left out, the checks of explicitly given counts, the searched space, and the
// problem's JSON object and one-line summary. CLI-only (it reads ProblemFlags / CLI11); the
// engine launch translation is src/launch/.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/problem_flags.h"
#include "plan/space.h"
#include "common/status.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::cli {

// Fills what the user left out with plan's built-in problem: model gpt-moe-1.6t, 1,024 GPUs
// (unless --gpus, --nodes or --cluster is given), decode, context 16,384.
void ApplyPlanDefaults(ProblemFlags* f);
// Counts the user gave explicitly as 0 (--gpus 0, --nodes 0, --context 0, --isl 0, --osl 0,
// --max-batch 0) are usage errors: BuildProblem reads 0 as "not given", and plan's defaults would
// silently replace them.
Status CheckGivenCounts(const CLI::App& cmd, const ProblemFlags& f);
// The searched space (plan/space.h).
using plan::PlanSpaceOptions;
// {"model", "gpu", "gpus", "gpus_per_node", "mode", "lengths": {...}, "weight_dtype",
//  "kv_dtype", "slo": {"ttft_ms", "tpot_ms"} (null = none), "max_batch"}.
nlohmann::ordered_json ProblemJson(const Problem& p);
// The warning for a serve plan without an SLO (neither ttft_ms nor tpot_ms), from the plan's
// latencies; "" for other modes or when an SLO is given:
//   serving without --slo: the plan maximises tokens/s per GPU whatever its latency: TTFT
//   6612.3 ms, TPOT 48.30 ms; bound them with --slo ttft_ms=X,tpot_ms=Y
std::string NoSloWarning(const Problem& p, double ttft_s, double tpot_s);
// One line: "gpt-moe-1.6t, decode at context 16,384, 1,024 x h100 (128 nodes of 8)".
std::string ProblemSummary(const Problem& p);

}  // namespace l2s::cli
