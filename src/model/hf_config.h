// HuggingFace config.json -> ModelSpec. Errors name the file, the field and what was expected.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/model.h"

namespace l2s {

StatusOr<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name);
StatusOr<ModelSpec> LoadHfConfig(const std::string& path);

}  // namespace l2s
