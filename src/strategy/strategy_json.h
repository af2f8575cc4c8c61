// JSON form of a Strategy:
//   {"pp":2,"tp":8,"dp":4,"ep":32,"batch":64,"sp":false,"dims":{"embed":"dim0",...}}
// plus, when not at their defaults, "expert_slots" (int), "overlap" ("tbo"/"sbo") and "mtp" (int).
// "batch" is a non-negative integer or "auto" (0 = auto; ToJson writes "auto" for 0). FromJson
// applies the rules of FromText: any subset of keys, missing degrees default to 1 (dp to
// total_gpus/(pp*tp) when total_gpus > 0), missing dims to Megatron's, missing batch to auto;
// unknown keys, wrong types and non-positive degrees are errors naming the key.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "common/status.h"
#include "strategy/strategy.h"

namespace l2s {

nlohmann::json ToJson(const Strategy& s);
StatusOr<Strategy> FromJson(const nlohmann::json& j, int total_gpus = 0);

// Same, through JSON text (FromJsonText reports malformed JSON as a ParseError; never throws).
std::string ToJsonText(const Strategy& s);
StatusOr<Strategy> FromJsonText(std::string_view text, int total_gpus = 0);

}  // namespace l2s
