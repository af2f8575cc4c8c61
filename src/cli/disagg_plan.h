// `l2s plan --serving disagg|auto`: the formatting of the disaggregated plan (docs/PLAN.md
// "Disaggregated serving"); the plan itself comes from src/plan/disaggregated.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "launch/disagg_launch.h"
#include "plan/disaggregated.h"
#include "search/joint.h"
#include "sim/disagg.h"

namespace l2s::cli {

using plan::BuildsOneEngineStrategy;
using plan::DisaggLaunches;
using plan::DisaggOracleAsSearch;
using plan::DisaggPlan;
using plan::DisaggPlanRequest;
using plan::kJointSpaceSearchers;
using plan::PlanDisaggregated;
using plan::PrepareDisaggregated;
using plan::DisaggRoleText;

// JSON of a disaggregated plan (best.* fields of docs/PLAN.md).
nlohmann::ordered_json DisaggBestJson(const DisaggPlan& d);
// The short comparison object (strategy texts, tokens/s per GPU, latencies).
nlohmann::ordered_json DisaggSummaryJson(const DisaggPlan& d);
// {"<engine>": {"backend", "exact", "unsupported", "runnable", "prefill", "decode",
//  "processes": [{"role", "count", "gpus", "command", "file": {"name", "contents"}, "notes"}],
//  "notes"}} for `best` plans' "launch" field.
nlohmann::ordered_json DisaggLaunchJson(const std::vector<launch::DisaggLaunch>& l);
// The "Launch (disaggregated)" text section (ends with a newline).
std::string FormatDisaggLaunch(const std::vector<launch::DisaggLaunch>& l);

// Readable section (ends with a newline).
std::string FormatDisaggPlan(const Problem& serve, const DisaggPlan& d, const std::string& searcher);

}  // namespace l2s::cli
