// HuggingFace config.json -> ModelSpec. Errors name the file, the field and what was expected.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "model/model.h"

namespace l2s {

StatusOr<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name);
// The same from a parsed document (`root`, the config.json object).
StatusOr<ModelSpec> ParseHfConfigObject(const nlohmann::json& root, std::string_view source_name);
StatusOr<ModelSpec> LoadHfConfig(const std::string& path);

// hf_quant_config.json, which TensorRT Model Optimizer writes beside a config.json that has no
// quantization_config: its quantization.quant_algo (FP8* -> fp8, NVFP4* / MXFP4 -> fp4) and
// exclude_modules (naming self_attn -> attention unquantized) applied to `m`.
Status ApplyHfQuantConfig(std::string_view json_text, std::string_view source_name,
                          ModelSpec* m);

}  // namespace l2s
