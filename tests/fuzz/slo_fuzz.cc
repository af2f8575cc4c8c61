// Fuzz target: --slo text. ParseSlo never crashes or hits UB; an error is one line; accepted
// limits are finite and within (0, kMaxSloMs] ms, 0 meaning "not set".
// Seeds: tests/fuzz/corpus/slo.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/problem_flags.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using l2s_fuzz::Require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  l2s::Workload w;
  const l2s::Status st = l2s::cli::ParseSlo(text, &w);
  if (!st.ok()) {
    l2s_fuzz::CheckError(st);
    return 0;
  }
  Require(!text.empty(), "empty text is an error");
  for (double v : {w.ttft_ms, w.tpot_ms})
    Require(v == 0 || (std::isfinite(v) && v > 0 && v <= l2s::cli::kMaxSloMs), "limits in range");
  Require(w.ttft_ms > 0 || w.tpot_ms > 0, "an accepted --slo sets a limit");
  return 0;
}
