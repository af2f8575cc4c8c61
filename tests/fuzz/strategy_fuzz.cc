// Fuzz target: the strategy text form. FromText never crashes or hits UB; an error is one line;
// an accepted strategy prints (ToText) to a text that parses back to the same strategy. Then the
// CLI's ResolveStrategy (eval / explain: --strategy) on a fixed problem - Mixtral 8x7B on 8 or
// 64 H100s - is an error or a strategy the simulator evaluates to finite figures.
// Seeds: tests/fuzz/corpus/strategy.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cli/report.h"
#include "fuzz_check.h"
#include "hw/hw.h"
#include "model/presets.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace {

const l2s::Simulator& Sim(int gpus) {
  auto make = [](int n) {
    l2s::Problem p;
    p.model = *l2s::LoadModel("mixtral-8x7b");
    p.cluster = *l2s::MakeCluster("h100", n);
    return std::make_unique<l2s::Simulator>(std::move(p));
  };
  static const std::unique_ptr<l2s::Simulator> s8 = make(8), s64 = make(64);
  return gpus == 8 ? *s8 : *s64;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using l2s_fuzz::Require;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const int gpus = size % 2 == 0 ? 8 : 64;  // FromText's dp default depends on the count
  l2s::StatusOr<l2s::Strategy> s = l2s::FromText(text, gpus);
  if (!s.ok()) {
    l2s_fuzz::CheckError(s.status());
  } else {
    const std::string printed = l2s::ToText(*s);
    l2s::StatusOr<l2s::Strategy> again = l2s::FromText(printed, gpus);
    Require(again.ok(), "ToText output parses");
    Require(*again == *s, "ToText/FromText round trip");
  }
  for (const auto& [sim_gpus, batch] : {std::pair<int, const char*>{8, ""}, {64, ""}, {8, "auto"}}) {
    const l2s::Simulator& sim = Sim(sim_gpus);
    l2s::StatusOr<l2s::Strategy> r = l2s::cli::ResolveStrategy(sim.problem(), text, batch);
    if (!r.ok()) {
      l2s_fuzz::CheckError(r.status());
      continue;
    }
    const l2s::Evaluation e = sim.Evaluate(*r);
    Require(std::isfinite(e.tokens_per_s) && e.tokens_per_s >= 0, "finite throughput");
    if (e.valid()) Require(e.tokens_per_s > 0 && std::isfinite(e.mem_bytes), "valid: positive");
    else Require(!sim.Reason(*r, e).empty(), "invalid: a reason");
  }
  return 0;
}
