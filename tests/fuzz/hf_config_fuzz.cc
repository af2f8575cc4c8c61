// libFuzzer target: ParseHfConfig must never crash, throw, leak or hit UB on any input, and a
// config it accepts must satisfy ValidateModelSpec and give finite derived figures, and its input
// checks (config_lint.h) one-line warnings.
// Built and run as described in tests/fuzz/CMakeLists.txt; seeds: ../shared/models/hf.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/config_lint.h"
#include "model/counts.h"
#include "model/hf_config.h"
#include "model/json_fields.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  l2s::StatusOr<l2s::ModelSpec> m = l2s::ParseHfConfig(text, "fuzz.json");
  if (!m.ok()) {
    l2s_fuzz::CheckError(m.status());
    return 0;
  }
  if (!l2s::ValidateModelSpec(*m).ok()) std::abort();
  const l2s::ParamCounts c = l2s::CountParams(*m);
  if (c.total <= 0 || c.active <= 0 || c.active > c.total) std::abort();
  const double kv = l2s::KvBytesForSequence(*m, l2s::DType::kBF16, 4096);
  const double f = l2s::FlopsPerTokenDecode(*m, 4096) + l2s::FlopsPerTokenPrefill(*m, 4096);
  const double w = l2s::WeightBytes(*m, l2s::DType::kFP4);
  if (!std::isfinite(kv) || !std::isfinite(f) || !std::isfinite(w) || f <= 0) std::abort();
  // The input checks (config_lint.h) on what the importer accepted: one line per warning.
  l2s::StatusOr<nlohmann::json> root = l2s::jsonio::Parse(text, "fuzz.json");
  if (!root.ok()) std::abort();
  for (const std::string& line : l2s::LintHfConfig(*root, "fuzz.json"))
    if (line.empty() || line.find('\n') != std::string::npos) std::abort();
  for (const std::string& name : l2s::ConfigModelNames(*root, "fuzz"))
    if (l2s::NamedSizeWarning(*m, name).find('\n') != std::string::npos) std::abort();
  return 0;
}
