// The logic of `l2s validate`: read measured deployments (CSV), predict each with the simulator,
// and score the predictions, overall and per group (engine family, regime). A library of its own
// (l2s_validate) so that it can be tested and reused; the CLI only formats. Rows and notes:
// measurements.cc; prediction: predict.cc; scores and fits: score.cc.
//
// CSV columns (header row; any order; unknown extra columns are ignored). The 19 columns of the
// first file format:
//   id, source, engine, gpu, gpus, model_config, weight_dtype, kv_dtype, tp, pp, dp, ep, mode,
//   isl, osl, context, batch, metric, value
// and the optional columns of the 35-column format (../shared/reference/MEASUREMENTS.md):
//   replicas, expert_slots, mtp, mtp_accept, max_batch, max_num_tokens, concurrency,
//   prefill_gpus, prefill_tp, prefill_dp, prefill_ep, decode_gpus, decode_tp, decode_dp,
//   decode_ep, notes
// and one optional column of this reader: overlap (none | tbo | sbo; empty = not stated = none,
// the engines' default).
// Required: model_config, gpu, mode, metric, value. Empty cells mean "not stated": tp, pp, ep and
// replicas default to 1, dp to gpus/(replicas*tp*pp), gpus to replicas*tp*pp*dp, batch to auto,
// mtp to 0 (off), weight_dtype to the model's, kv_dtype to the engine's default (fp8 for
// TensorRT-LLM serving a quantised checkpoint, whose KV format it follows; bf16 otherwise).
//
// Semantics of a row (see docs/dev/VALIDATION.md): the simulator predicts ONE instance of
// gpus/replicas GPUs with the row's tp/pp/dp/ep, expert slots and MTP depth, at the batch the row
// states (batch = sequences per attention-dp rank; else concurrency / dp; else the simulator's best
// batch under the row's max_batch), with the row's engine limits and MTP acceptance. Throughput
// totals are multiplied by replicas.
//   serve   - max-throughput or fixed-concurrency benchmark at isl/osl (simulator serve mode).
//   decode  - decode steps at KV length `context`.
//   prefill - prompts of `isl` tokens.
//   disagg  - a prefill pool and a decode pool (prefill_*/decode_* columns; each pool is
//             instances of tp x dp GPUs), costed by the disaggregated model (sim/disagg.h) with
//             every instance of each pool; concurrency spread over the decode ranks.
// The prediction is the simulator's figure for `metric` scaled by the engine family's factor
// (Simulator::EngineFactor). Rows that cannot be predicted are MISSes, never dropped.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/model.h"
#include "serve/bench_client.h"
#include "sim/simulator.h"

namespace l2s::validate {

// ---------------------------------------------------------------- CSV
struct CsvRecord {
  int line = 0;                     // 1-based line on which the record starts
  std::vector<std::string> fields;  // unquoted values
};
// RFC 4180: fields separated by commas; a field may be enclosed in double quotes, inside which
// commas and line breaks are data and "" is one quote. LF or CRLF line ends; blank lines are
// skipped. Errors (ParseError): "line N, column C: ..." for an unterminated quoted field, a quote
// inside an unquoted field, or characters after a closing quote. Bytes are passed through as they
// are: a file need not be UTF-8 (Windows-1252 text in a `source` cell is data; whoever writes JSON
// must replace invalid sequences, as `l2s validate --json` does).
StatusOr<std::vector<CsvRecord>> ParseCsv(std::string_view text);

// ---------------------------------------------------------------- rows
// Largest parallel degree, replica count or GPU count a row may state (the cluster limit of the hw
// layer: far above any deployment).
constexpr int64_t kMaxRowGpus = int64_t{1} << 24;

// One side of a disaggregated deployment (disagg rows; 0 = not stated).
struct PoolColumns {
  int64_t gpus = 0, tp = 0, dp = 0, ep = 0;
};

// Settings that a row's `notes` state in prose, read by keyword (case-insensitive; a keyword
// directly after "no", "not" or "without" does not count). The list (docs/dev/VALIDATION.md,
// "Settings read from the notes"):
//   "two-batch overlap"                          -> overlap tbo
//   "single-batch overlap" / "single-batch-overlap" -> overlap sbo
//   "enable_balance"                             -> TensorRT-LLM attention-DP balancing on
//                                                   (attention_dp_config.enable_balance)
//   "fp8 attention"                              -> attention math in FP8
//   "fp8 flashmla"                               -> attention math in FP8 and an FP8 latent KV
//                                                   cache (FlashMLA's FP8 path reads FP8 KV)
//   "random-range-ratio <r>" / "uniform in [<r>x" -> request lengths uniform in [r, 1] x nominal
//                                                   (InferenceX's random dataset): predicted
//                                                   over that distribution (Predictor::Predict)
//   "mtp on"                                     -> MTP on; with an empty mtp cell the depth is
//                                                   an unstated degree (predicted at its best)
//   "<N> requests" (N digits, commas allowed) -> an offline benchmark of N requests: serve rows
//                                                   never hold more than N in flight, so the
//                                                   auto batch per rank is at most
//                                                   ceil(N / (replicas x dp))
// Anything else in the notes (pipelined overlap of other kinds, optimisations whose use is not
// stated) is not read.
struct NotedSettings {
  std::string overlap;         // "tbo", "sbo", or "" when the notes state neither
  bool adp_balance = false;
  bool fp8_attention = false;
  bool fp8_kv = false;
  int64_t requests = 0;        // benchmark requests; 0 = not stated
  // Lengths drawn per request uniformly from [length_ratio, 1] x the nominal isl / osl
  // ("random-range-ratio <r>" or "uniform in [<r>x,1.0x]"); 1 = fixed lengths.
  double length_ratio = 1;
  bool mtp_on = false;         // "mtp on": speculative decoding on, depth not necessarily stated
  // SGLang's "--scheduler-recv-interval <n>" (or "scheduler-recv-interval <n>"); 1 = not stated.
  int recv_interval = 1;
  // The prompts a concurrency run's client sends: "num prompts = K x concurrency" (also
  // "num-prompts", "num_prompts") sets prompts_per_client = K; "num prompts = N", "num-prompts N"
  // or "--num-prompts N" sets num_prompts = N. 0 = not stated (the client's default, 10 x N).
  int prompts_per_client = 0;
  int64_t num_prompts = 0;
  // "tbo adp-balance attn=fp8 kv=fp8"-style summary ("" when nothing was read).
  std::string Text() const;
};
NotedSettings ReadNotes(std::string_view notes);

struct Measurement {
  int line = 0;
  std::string id, source, engine, gpu, model_config, weight_dtype, kv_dtype, mode, metric, notes;
  std::string overlap;                    // "", "none", "tbo", "sbo" (lower-cased)
  int64_t gpus = 0;                       // 0 = not given
  int64_t tp = 1, pp = 1, dp = 0, ep = 1;  // dp 0 = not given
  int64_t isl = 0, osl = 0, context = 0;  // 0 = not given
  int64_t batch = 0;                      // sequences per attention-dp rank; 0 = not stated
  double value = 0;                       // measured metric (> 0)
  // 35-column format (0 = not stated).
  int64_t replicas = 0;                   // independent instances in `gpus` (not stated = 1)
  int64_t expert_slots = 0;               // routed-expert slots per instance
  int64_t mtp = 0;                        // speculative tokens per decode step (0 = off)
  double mtp_accept = 0;                  // mean tokens emitted per step incl. the verified one
  int64_t max_batch = 0, max_num_tokens = 0;  // engine limits per rank
  int64_t concurrency = 0;                // client requests in flight for one instance
  PoolColumns prefill, decode;            // disagg rows
  bool layout_stated = true;              // false when the tp, dp and ep cells are all empty
  bool mtp_stated = true;                 // false when the mtp cell is empty
  NotedSettings noted;                    // settings read from `notes` (ReadNotes)
};
// Parses and checks the CSV. Malformed input gives one line naming the line number and column:
// "<name>:<line>: column '<col>': expected ..., got '...'" (ParseError). Integer cells are
// bounded (degrees, replicas, GPUs <= kMaxRowGpus) so that no product of them can overflow.
StatusOr<std::vector<Measurement>> ParseMeasurements(std::string_view text, std::string_view name);

// Engine family of an engine label (sim/simulator.h ParseEngineName): "trtllm-0.17",
// "TensorRT-LLM v0.17" -> "trtllm", "vLLM 0.6.3" -> "vllm", "sglang-0.5.5-rocm" -> "sglang",
// "dynamo+trtllm" -> "trtllm". "" for an empty label.
std::string EngineFamily(std::string_view engine);

// The GPU preset a row's gpu label names: the label itself, or the first of its words that is a
// preset ("H100-SXM5-80GB" -> h100, "AMD Instinct MI300X" -> mi300x, "HGX B300" -> b300,
// "GB300 NVL72" -> gb300); the lower-cased label when none is (an unknown GPU).
std::string GpuOfLabel(std::string_view label);

// Parallelism regime of a row, for the per-regime scores:
//   "tp-only"          dp = 1 and ep = 1 (tensor/pipeline parallel only);
//   "tp+ep"            dp = 1, ep > 1 (attention tensor-parallel, experts expert-parallel);
//   "attention-dp+ep"  dp > 1 and ep > 1 (attention data parallel with wide expert parallelism);
//   "attention-dp"     dp > 1, ep = 1;
//   "disagg"           mode disagg.
// dp not given counts as gpus / (replicas tp pp).
std::string Regime(const Measurement& m);

// ---------------------------------------------------------------- prediction
struct Prediction {
  bool ok = false;
  std::string reason;     // why the row could not be predicted (ok == false)
  double raw = 0;         // the simulator's figure for the metric (ideal engine), all replicas
  double factor = 1;      // engine factor applied
  double predicted = 0;   // raw scaled by the factor (throughput x factor, latency / factor)
  int batch = 0;          // batch the simulator used (per attention-dp rank)
  int64_t replicas = 1;   // instances the figure covers
  std::string strategy;   // canonical text of the strategy evaluated (one instance)
  // Engine limits the prediction derived rather than read from the row ("" = stated or the
  // engine's defaults): trtllm-bench's own estimate (trtllm_bench.h), e.g.
  // "trtllm-bench max_batch 64, max_num_tokens 2048".
  std::string limits;
  // Degrees the row leaves unstated, chosen as the best (highest throughput) of their values, e.g.
  // "prefill tp 8 dp 1 ep 8; mtp 3" ("" = everything was stated).
  std::string chosen;
  // Lengths predicted: "" for the row's fixed lengths, else the distribution's grid, e.g.
  // "isl/osl uniform 0.8-1.0 x nominal (9-point grid)".
  std::string lengths;
};

// What a metric measures, which decides how the engine factor applies and whether the fit uses
// it: throughput totals (x factor, fitted), latencies (/ factor), per-user speed (x factor;
// a latency regime, so not fitted). kUnknown for a name not in the format.
enum class MetricKind { kUnknown, kThroughput, kLatency, kPerUser };
MetricKind KindOfMetric(const std::string& metric);

class Predictor {
 public:
  // `model_dirs` are searched in order for the model_config file; a model_config that is not a
  // file there may also be a preset name or a path. `apply_engine_factor` = false predicts for
  // the ideal engine (factor 1: what --fit-engine-factors fits against).
  Predictor(std::vector<std::string> model_dirs, bool apply_engine_factor);
  // Rows that leave degrees unstated (layout_stated false; a disagg pool without tp; mtp on
  // without a depth) are predicted at every candidate value and reported at the one with the
  // highest throughput (Prediction::chosen). Rows whose lengths follow a distribution
  // (noted.length_ratio < 1) are predicted on a 3 x 3 grid of (isl, osl) at the midpoints of
  // three equal-probability bins of each: throughput metrics as requests/s = 1 / mean(1 / r_i)
  // (each request occupies the deployment for 1 / r_i) times the mean tokens per request;
  // latencies and per-user speed as the mean over the grid (client-side means). A serve or
  // disagg row stating a concurrency has its mean TTFT, mean TPOT and output tokens/s from one
  // simulation of its benchmark client (serve/bench_client.h), which draws the lengths itself.
  Prediction Predict(const Measurement& row);
  // false: predict without the engines' request overhead (Workload::request_overhead; what
  // FitRequestOverhead fits against). On by default.
  void set_request_overhead(bool on) { request_overhead_ = on; }

 private:
  Prediction PredictLengths(const Measurement& row);  // the length distribution, fixed degrees
  Prediction PredictOne(const Measurement& row);      // fixed lengths and degrees
  StatusOr<ModelSpec> Model(const std::string& config);
  std::vector<std::string> dirs_;
  bool apply_factor_;
  bool request_overhead_ = true;
  std::mutex cache_mu_;  // Predict may run on several threads (PredictAll)
  std::map<std::string, StatusOr<ModelSpec>> cache_;

 public:
  // Simulated benchmark-client runs (or why each failed). The three metric rows of a measured run
  // share one: runs are keyed by every input of the row but its metric, value and prose
  // (ClientKey in row_metrics.h). Entries are never changed once stored, so a reference to one
  // stays valid while other threads add theirs (under `mu`).
  struct ClientRuns {
    std::mutex mu;
    std::map<std::string, StatusOr<serve::BenchClientResult>> runs;
  };

 private:
  ClientRuns client_runs_;
};

// The simulator's value of `metric` for an evaluation of `w` on `gpus` GPUs (one instance), or
// nullopt when the metric is unknown or meaningless for the mode. Throughput metrics:
// output_tokens_per_s, input_tokens_per_s, total_tokens_per_s, requests_per_s, tokens_per_s (the
// mode's own), each also with a _per_gpu suffix; tokens_per_s_per_user = 1 / tpot (output tokens
// per second one sequence sees); latency metrics: tpot_ms, ttft_ms.
std::optional<double> MetricValue(const Evaluation& e, const Workload& w, int gpus,
                                  const std::string& metric);

// ---------------------------------------------------------------- scoring
// A MISS counts as 100% absolute error and outside 25%.
constexpr double kMissAbsPctError = 100.0;

struct RowResult {
  Measurement row;
  Prediction pred;
  double error_pct = 0;  // (predicted - measured) / measured * 100; kMissAbsPctError for a MISS
};
// Predicts every row (one Predictor, so model configs are read once), on up to `jobs` threads:
// rows that share a client run (ClientKey) in one thread, in their order; the results are the
// same for every `jobs`, in row order. `on_row` (may be empty) is called after each row with the
// rows done and the total (a progress line), one call at a time.
std::vector<RowResult> PredictAll(const std::vector<Measurement>& rows, Predictor* predictor,
                                  const std::function<void(size_t, size_t)>& on_row = {},
                                  int jobs = 1);

// Scores of a set of rows (median, mean, share within 25% are NaN for an empty set).
struct Scores {
  int rows = 0, predicted = 0, missed = 0;
  double median_abs_pct_error = 0;
  double mean_abs_pct_error = 0;
  double share_within_25pct = 0;  // fraction in [0, 1]
};
Scores Score(const std::vector<RowResult>& results);

struct Summary : Scores {
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
  // The same scores per engine family and per regime (Regime), keyed by name.
  std::map<std::string, Scores> by_engine, by_regime;
  // Per GPU (the row's gpu, lower-cased) and per metric (the metric's name; "throughput+tpot"
  // pools every throughput and tpot_ms row).
  std::map<std::string, Scores> by_gpu, by_metric;
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
// are used: latency and per-user metrics are skipped).
EngineFitResult FitEngineFactors(const std::vector<RowResult>& results);

// Request overhead fit (Simulator::RequestOverheadSeconds): per engine family, over its
// aggregated (mode serve) ttft_ms rows with a concurrency <= kRequestOverheadFitConcurrency -
// where one prompt's prefill is most of a request's TTFT - the median of measured - predicted (a
// time outside the engine's steps, not scaled by its factor). A family needs
// kMinRowsPerEngineFit rows for a value of its own. `results` must come from a Predictor with
// set_request_overhead(false).
constexpr int64_t kRequestOverheadFitConcurrency = 16;
struct RequestOverheadFamily {
  std::string family;
  int rows = 0;
  double overhead_s = 0;
  bool own = false;  // rows >= kMinRowsPerEngineFit: the family gets overhead_s
};
struct RequestOverheadFit {
  int rows = 0;
  std::vector<RequestOverheadFamily> families;  // by family name
  // The family's fitted value, 0 when it has none of its own.
  double Of(const std::string& family) const;
};
// Whether row `m` is one FitRequestOverhead reads (when predicted).
bool RequestOverheadFitRow(const Measurement& m);
RequestOverheadFit FitRequestOverhead(const std::vector<RowResult>& results);

}  // namespace l2s::validate
