// Numeric formats of weights, KV cache and compute, and unit helpers. Sizes are bytes (double,
// since MXFP4 has fractional bytes per element); capacities in GiB = 2^30 bytes; bandwidths in
// bytes/s (10^9 = GB/s); times in seconds unless a name says _us / _ms.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace l2s {

enum class DType { kBF16, kFP8, kFP4 };

// Bytes per stored element. FP4 is MXFP4: 4-bit values plus one 8-bit scale per 32 elements.
constexpr double BytesPerElement(DType t) {
  switch (t) {
    case DType::kBF16: return 2.0;
    case DType::kFP8: return 1.0;
    case DType::kFP4: return 0.5 + 1.0 / 32.0;
  }
  return 2.0;
}

std::string_view DTypeName(DType t);                 // "bf16", "fp8", "fp4"
std::optional<DType> ParseDType(std::string_view s);  // accepts bf16/bfloat16, fp8/e4m3, fp4/mxfp4

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kTB = 1e12;

}  // namespace l2s
