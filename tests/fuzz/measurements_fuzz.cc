// Fuzz target: the measurements CSV reader of `l2s validate`. It never crashes or hits UB; an
// error is one line; every accepted row has a positive finite value.
// Seeds: ../shared/reference/measurements*.csv. (Kept small: the reader's API is the only link.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "validate/validate.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = l2s::validate::ParseMeasurements(text, "fuzz.csv");
  if (!rows.ok()) {
    l2s_fuzz::CheckError(rows.status());
    return 0;
  }
  for (const auto& r : *rows)
    l2s_fuzz::Require(std::isfinite(r.value) && r.value > 0, "positive finite values");
  return 0;
}
