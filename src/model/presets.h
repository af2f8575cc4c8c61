// Built-in models: every config in ../shared/models/hf under a short name (numbers written into
// presets.cc, not read from the files), plus the paper's synthetic GPT-MoE models.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/model.h"

namespace l2s {

std::vector<std::string> ModelPresetNames();
StatusOr<ModelSpec> ModelPreset(std::string_view name);
// A preset name, a path to a HuggingFace config.json (or its folder), or a HuggingFace repo id
// "org/name" found locally (model_source.h).
StatusOr<ModelSpec> LoadModel(std::string_view name_or_path);

}  // namespace l2s
