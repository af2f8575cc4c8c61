// The logic of `l2s validate`: read measured deployments (CSV), predict each with the simulator,
// and score the predictions. Kept apart from the command so that it can be tested.
//
// CSV columns (header row; any order; unknown extra columns are ignored):
//   id, source, engine, gpu, gpus, model_config, weight_dtype, kv_dtype, tp, pp, dp, ep, mode,
//   isl, osl, context, batch, metric, value
// Required: model_config, gpu, mode, metric, value. Empty numeric cells mean "not given": tp, pp,
// ep default to 1, dp to gpus/(tp*pp), gpus to tp*pp*dp, batch to auto.
//
// Semantics of a row (see docs/VALIDATION.md):
//   serve   - offline max-throughput run: the simulator's serve mode at the row's isl/osl, batch
//             auto (the engine picks the batch), Megatron dims, the row's tp/pp/dp/ep.
//   decode  - fixed `batch` sequences per attention-dp rank (auto when empty) at `context`.
//   prefill - prompts of `isl` tokens, batch per attention-dp rank or auto.
// The prediction is the simulator's figure for `metric` times the engine family's factor
// (Simulator::EngineFactor). Rows that cannot be predicted are MISSes, never dropped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/model.h"
#include "sim/simulator.h"

namespace l2s::cli {

// ---------------------------------------------------------------- CSV
struct CsvRecord {
  int line = 0;                     // 1-based line on which the record starts
  std::vector<std::string> fields;  // unquoted values
};
// RFC 4180: fields separated by commas; a field may be enclosed in double quotes, inside which
// commas and line breaks are data and "" is one quote. LF or CRLF line ends; blank lines are
// skipped. Errors (ParseError): "line N, column C: ..." for an unterminated quoted field, a quote
// inside an unquoted field, or characters after a closing quote.
StatusOr<std::vector<CsvRecord>> ParseCsv(std::string_view text);

// ---------------------------------------------------------------- rows
struct Measurement {
  int line = 0;
  std::string id, source, engine, gpu, model_config, weight_dtype, kv_dtype, mode, metric;
  int gpus = 0;                     // 0 = not given
  int tp = 1, pp = 1, dp = 0, ep = 1;  // dp 0 = not given
  int64_t isl = 0, osl = 0, context = 0;  // 0 = not given
  int batch = 0;                    // 0 = auto
  double value = 0;                 // measured metric (> 0)
};
// Parses and checks the CSV. Malformed input gives one line naming the line number and column:
// "<name>:<line>: column '<col>': expected ..., got '...'" (ParseError).
StatusOr<std::vector<Measurement>> ParseMeasurements(std::string_view text, std::string_view name);

// Engine family of an engine label: the lower-cased name without its version, with aliases
// ("trtllm-0.17" -> "trtllm", "TensorRT-LLM v0.17" -> "trtllm", "vLLM 0.6.3" -> "vllm",
// "sglang-0.4.6" -> "sglang"). "" for an empty label.
std::string EngineFamily(std::string_view engine);

// ---------------------------------------------------------------- prediction
struct Prediction {
  bool ok = false;
  std::string reason;     // why the row could not be predicted (ok == false)
  double raw = 0;         // the simulator's figure for the metric (ideal engine)
  double factor = 1;      // engine factor applied
  double predicted = 0;   // raw scaled by the factor (throughput x factor, latency / factor)
  int batch = 0;          // batch the simulator used (per attention-dp rank)
  std::string strategy;   // canonical text of the strategy evaluated
};

class Predictor {
 public:
  // `model_dirs` are searched in order for the model_config file; a model_config that is not a
  // file there may also be a preset name or a path. `apply_engine_factor` = false predicts for
  // the ideal engine (factor 1: what --fit-engine-factors fits against).
  Predictor(std::vector<std::string> model_dirs, bool apply_engine_factor);
  Prediction Predict(const Measurement& row);

 private:
  StatusOr<ModelSpec> Model(const std::string& config);
  std::vector<std::string> dirs_;
  bool apply_factor_;
  std::map<std::string, StatusOr<ModelSpec>> cache_;
};

// The simulator's value of `metric` for an evaluation of `w` on `gpus` GPUs, or nullopt when the
// metric is unknown or meaningless for the mode. Throughput metrics: output_tokens_per_s,
// input_tokens_per_s, total_tokens_per_s, requests_per_s, tokens_per_s (the mode's own), each
// also with a _per_gpu suffix; latency metrics: tpot_ms, ttft_ms. `is_latency` tells which kind.
std::optional<double> MetricValue(const Evaluation& e, const Workload& w, int gpus,
                                  const std::string& metric, bool* is_latency);

// ---------------------------------------------------------------- scoring
// A MISS counts as 100% absolute error and outside 25%.
constexpr double kMissAbsPctError = 100.0;

struct RowResult {
  Measurement row;
  Prediction pred;
  double error_pct = 0;  // (predicted - measured) / measured * 100; kMissAbsPctError for a MISS
};

struct Summary {
  int rows = 0, predicted = 0, missed = 0;
  double median_abs_pct_error = 0;
  double mean_abs_pct_error = 0;
  double share_within_25pct = 0;  // fraction in [0, 1]
  // Rank correlation across tensor-parallel sizes. A group = rows with the same model_config,
  // gpu, mode, isl, osl, context, engine family, weight and KV dtypes and metric that cover >= 3
  // distinct tp values. `spearman` = mean over groups of Spearman(predicted, measured) over the
  // group's rows; `spearman_pooled` = Pearson correlation of the within-group ranks (each group's
  // ranks centred on their mean) pooled over all groups. A MISS ranks as predicted 0 (lowest).
  // NaN when there is no group. `spearman_per_gpu`: the same mean over groups, ranking
  // throughput per GPU (value / GPUs) instead - what a planner choosing tp for a fixed model
  // compares, and harder than the total (which grows with tp almost always).
  int spearman_groups = 0;
  double spearman = 0, spearman_pooled = 0, spearman_per_gpu = 0;
};

Summary Summarize(const std::vector<RowResult>& results);

// Fractional ranks (1-based; ties get the mean of their positions).
std::vector<double> Ranks(const std::vector<double>& v);
// Spearman rank correlation = Pearson correlation of the fractional ranks. NaN when n < 2 or a
// side is constant.
double Spearman(const std::vector<double>& x, const std::vector<double>& y);
double Pearson(const std::vector<double>& x, const std::vector<double>& y);
double Median(std::vector<double> v);  // NaN for an empty vector

// Engine factor fit: for each engine family, the median over its predicted rows of
// measured / raw (raw = the ideal-engine prediction). Families with fewer than
// kMinRowsPerEngineFit predicted rows are listed but not given a factor of their own (they use
// the default: the median of measured / raw over every predicted row).
constexpr int kMinRowsPerEngineFit = 3;
struct EngineFit {
  std::string family;
  int rows = 0;
  double median_ratio = 0;
  bool own_factor = false;
};
struct EngineFitResult {
  std::vector<EngineFit> families;
  double default_factor = 1;
  int rows = 0;
};
// `results` must come from a Predictor with apply_engine_factor = false (throughput rows only
// are used: latency metrics are skipped).
EngineFitResult FitEngineFactors(const std::vector<RowResult>& results);

}  // namespace l2s::cli
