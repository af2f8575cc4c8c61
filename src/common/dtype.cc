#include "common/dtype.h"

namespace l2s {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kBF16: return "bf16";
    case DType::kFP8: return "fp8";
    case DType::kFP4: return "fp4";
  }
  return "?";
}

std::optional<DType> ParseDType(std::string_view s) {
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "fp8" || s == "e4m3" || s == "fp8_e4m3") return DType::kFP8;
  if (s == "fp4" || s == "mxfp4") return DType::kFP4;
  return std::nullopt;
}

}  // namespace l2s
