// Sweep grids: a JSON or YAML file of axes (models x gpus x counts x workloads x slos x engines x
// prices) plus common plan flags, expanded into scenarios, each one `l2s plan ... --json` run.
//
//   models: [llama-3.1-8b, qwen3-32b]      # --model
//   gpus: [h100, h200]                     # --gpu
//   counts: [1, 2, 8]                      # --gpus (GPUs per scenario)
//   workloads:                             # --mode/--isl/--osl/--context
//     - {mode: serve, input: 2048, output: 256}
//     - {mode: decode, context: 8192}
//     - {input: 2048, output: 256, rate: 5}      # a traffic: --rate (or concurrency: --concurrency)
//   slos: ["ttft_ms=2000,tpot_ms=50", {tpot_ms: 30}, none]   # --slo ("none"/null: no flag)
//   engines: [vllm, sglang]                # --engine
//   prices: [2.5]                          # price_per_gpu_hour: a column (see Scenario::price)
//   prices: {h100: 2.5, h200: 3.1}         # or one price per GPU type (every GPU of `gpus`; null:
//                                          # none): a scenario's price is its GPU's
//   plan: {budget: 200, seed: 0}           # common plan flags: `--KEY VALUE`, true = `--KEY`
//
// Every axis is optional (absent = one value: the plan default, no flag). Unknown top-level keys
// are errors. Scenario order: models outermost, then gpus, counts, workloads, slos, engines, prices.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace l2s::sweep {

struct Workload {
  std::string mode;  // "" = plan's default
  std::optional<int64_t> input, output, context;
  // A traffic the plan is simulated under (plan --rate / --concurrency, percentile SLOs): at most
  // one of the two, serving workloads only.
  std::optional<double> rate;             // requests/s, open loop
  std::optional<int64_t> concurrency;     // clients in flight, closed loop
  std::string Label() const;  // "serve 2048/256", "serve 2048/256 at 5 req/s", "decode ctx 8192", "default"
};

struct Scenario {
  size_t index = 0;      // position in grid order
  std::string id;        // 16 hex digits: FNV-1a 64 of the plan argv (stable across runs)
  std::string model, gpu, slo, engine;  // "" = not given
  std::optional<int64_t> count;
  Workload workload;
  std::optional<double> price;  // price per GPU-hour, passed through as a column
  std::vector<std::string> argv;  // the `plan` arguments after "plan", --json included
  std::string command = "plan";   // the l2s command the runners run (capacity --gpu a,b: capacity)
  std::string Label() const;      // "llama-3.1-8b h100 x2 serve 2048/256 vllm"
};

struct Grid {
  std::vector<std::string> models, gpus, slos, engines;
  std::vector<std::optional<int64_t>> counts;
  std::vector<Workload> workloads;
  std::vector<std::optional<double>> prices;
  std::map<std::string, std::optional<double>> price_by_gpu;  // `prices` as a GPU -> price mapping
  std::vector<std::pair<std::string, std::string>> plan_flags;  // (--flag, value or "")
};

// Whether `plan` accepts --price-per-gpu-hour (it does: a scenario's price reaches its plan, whose
// best.cost the results carry).
inline constexpr bool kPlanTakesPrice = true;

// Reads a grid from parsed JSON (`name` for messages). One-line InvalidArgument on a bad grid.
StatusOr<Grid> GridFromJson(const nlohmann::json& j, const std::string& name);
// Reads a grid file: JSON when it starts with '{' (after whitespace), else the YAML subset.
StatusOr<Grid> LoadGrid(const std::string& path);
// The scenarios of `grid`, in grid order.
std::vector<Scenario> Expand(const Grid& grid);
// FNV-1a 64 of the strings joined with '\0', as 16 lowercase hex digits.
std::string HashArgs(const std::vector<std::string>& args);

}  // namespace l2s::sweep
