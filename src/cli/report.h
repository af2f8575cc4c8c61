// Formatting of simulator results, shared by `l2s eval`, `explain`, `plan` and `compare`:
// the JSON object of one evaluation, the readable breakdown tables and the one-sentence "why".
//
// Units: every *_ms value is milliseconds of ONE step of the slowest pipeline stage (or, for
// ttft_ms / tpot_ms, of one request); *_gib values are GiB (2^30 bytes) per GPU of the stage with
// the largest footprint; tokens_per_s is the whole deployment (output tokens in serve/decode,
// input tokens in prefill).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "plan/cost.h"
#include "plan/error_bands.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::cli {

// The named engine, for the report (its factor is already in the simulated figures:
// Workload::engine_factor).
struct EngineInfo {
  std::string name;     // "" = none (the ideal engine the simulator models)
  double factor = 1.0;  // its Workload::engine_factor, 1.0 for none
  std::string title;    // the engine's title ("vLLM"), "" for none
  // What the engine cannot launch of the strategy as given (engine::Violations, one line each);
  // empty when it launches it, or for none.
  std::vector<std::string> unlaunchable;
};
// The engine of --engine `flag` ("" = none) for problem `p` (its fitted factor) running `s` as a
// server of `role`: what of `s` that engine does not launch as given.
EngineInfo EngineInfoOf(const std::string& flag, const Problem& p, const Strategy& s,
                        engine::Role role = engine::Role::kServer);
// "<title> does not run this as given: <what>", one per entry of e.unlaunchable.
std::vector<std::string> NotLaunchedLines(const EngineInfo& e);


// A TTFT figure printed with `decimals` decimals: "262.0 ms", and when `sim`'s engine has a
// request overhead (Simulator::RequestOverheadS) "262.0 ms (with the engine's request overhead,
// 132.3 ms)".
std::string TtftText(const Simulator& sim, double ttft_s, int decimals);

// "breakdown": {step_ms, compute_ms, comm_ms, by_operator {op: {compute_ms, comm_ms, total_ms}},
// by_collective {kind: ms}, memory_gib {weights, kv, activations, reserve, total, capacity}}.
// Operators with no time are left out of by_operator; collectives with no time of by_collective.
nlohmann::ordered_json BreakdownJson(const Evaluation& e);
// A plan's error band (plan/error_bands.h): {calibration, gpu, regime, regime_band, unmeasured};
// a band is {rows, median_abs_pct_error, share_within_25pct} or null.
nlohmann::ordered_json ErrorBandJson(const plan::Uncertainty& u);
// A plan's cost and energy (plan/cost.h) as JSON: usd_per_mtok_output, usd_per_mtok_total,
// tokens_per_joule_output, tokens_per_joule_total, price_per_gpu_hour, usd_per_hour, gpus,
// power_w (null where the price or the power is not known).
nlohmann::ordered_json CostJson(const plan::Cost& c);
// One line: "$0.556 per million output tokens ($0.111 input+output) at $2.00/GPU-h; 1.43 output
// tokens per joule at 700 W per GPU (board TDP)", or the part that is known; "" if nothing is.
// `hourly`: the price part also says the deployment's "$X per hour for N GPUs".
std::string CostLine(const plan::Cost& c, bool hourly = false);

// The full object `l2s eval --json` prints: valid, reason, tokens_per_s, tokens_per_s_per_gpu,
// ttft_ms (0 in decode mode), tpot_ms (0 in prefill mode), batch, memory_per_gpu_gib, breakdown,
// strategy (canonical text; the chosen batch when it was auto), model, gpu, gpus, gpus_per_node,
// mode, lengths, dtypes, engine, engine_factor, stage_ms, slowest_stage, notes, why.
// `e` is the simulator's evaluation (before the engine factor, which this function applies).
nlohmann::ordered_json EvaluationJson(const Simulator& sim, const Strategy& s,
                                      const Evaluation& e, const EngineInfo& engine);

// Readable multi-line table of the same (ends with a newline).
std::string FormatEvaluation(const Simulator& sim, const Strategy& s, const Evaluation& e,
                             const EngineInfo& engine);
// Only the time-by-operator / by-collective / memory tables (ends with a newline).
std::string FormatBreakdown(const Evaluation& e);

// Layers of each program kind inside pipeline stage `stage` (index = Program kind index), and
// whether that stage holds the embedding (first) / LM head (last).
struct StageLayers {
  std::array<int, Program::kMaxKinds> layers{};
  bool has_embed = false, has_lm_head = false;
};
StageLayers LayersOfStage(const ModelSpec& m, const Program& p, int pp, int stage);

// One sentence naming the largest cost of the slowest stage at the evaluation's batch, e.g.
// "decode is dominated by reading the expert weights (61% of the step)". Costs are grouped by
// what they do: reading weights vs matmul compute per operator family (a GEMM is called
// weight-bound when reading its weights at peak HBM bandwidth takes longer than its FLOPs at peak
// tensor throughput), attention over the KV cache, prefill attention, elementwise kernels, and
// each collective kind per group. "" for a structurally invalid strategy.
std::string WhySentence(const Simulator& sim, const Strategy& s, const Evaluation& e);

// A strategy in short: degrees, batch, sp, then slots, overlap and mtp when set, then only the
// dims that differ from Megatron's ("...; Megatron dims" when none does).
std::string ShortText(const ModelSpec& m, const Strategy& s);

// "1,234,567" style thousands separators for readable tables.
std::string Thousands(double v);

// `v` with two decimals, or, below 0.1, with the decimals that keep two significant digits
// ("0.0051" rather than "0.01" or "0.00"): figures such as a prefill pool's output tokens per
// joule.
std::string TwoDigits(double v);

// --- the --strategy / --batch flags of eval and explain ---
// Parses `text` (strategy text form; missing dp = GPUs/(pp*tp), missing dims Megatron's, dims of
// operators the model lacks cleared to none) and applies `batch_flag` ("" = keep the text's batch,
// "auto", or a positive integer). Usage errors (malformed text or --batch, degrees whose product
// is not the cluster's GPU count) are InvalidArgument/ParseError; model-dependent structural
// problems (tp not dividing the heads, ep not dividing the experts...) are NOT errors here: the
// simulator reports them as an invalid evaluation.
// `mtp_flag` >= 0 (--mtp) sets the strategy's mtp; a text with a different mtp is a usage error,
// and so is a `batch_flag` other than a batch the text states.
StatusOr<Strategy> ResolveStrategy(const Problem& p, const std::string& text,
                                   const std::string& batch_flag, int mtp_flag = -1);
// eval / explain of one strategy: flags its evaluation would ignore are InvalidArgument - a stated
// acceptance (--mtp-accept) with a strategy that speculates no tokens, a batch above the stated
// --max-batch (`max_batch_flag` > 0; the engine would not run it).
Status CheckStrategyFlags(const Problem& p, const Strategy& s, int max_batch_flag);

}  // namespace l2s::cli
