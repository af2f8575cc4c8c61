// What a measured row's metric is and how a simulation yields it (row_metrics.h, validate.h
// KindOfMetric and MetricValue).
#include "validate/row_metrics.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "common/text.h"
#include "engine/engine.h"
#include "validate/trtllm_bench.h"

namespace l2s::validate {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsLatencyBase(const std::string& m) {
  return m == "ttft_ms" || m == "tpot_ms" || m == "itl_ms" || m == "e2e_ms";
}

std::optional<PercentileMetric> PercentileOf(const std::string& metric) {
  for (const auto& [prefix, stat] :
       {std::pair<const char*, double serve::Percentiles::*>{"p50_", &serve::Percentiles::p50},
        {"p90_", &serve::Percentiles::p90},
        {"p99_", &serve::Percentiles::p99}}) {
    if (metric.rfind(prefix, 0) != 0) continue;
    const std::string base = metric.substr(4);
    if (IsLatencyBase(base)) return PercentileMetric{stat, base};
  }
  return std::nullopt;
}

MetricKind KindOfMetric(const std::string& metric) {
  if (IsLatencyBase(metric) || PercentileOf(metric)) return MetricKind::kLatency;
  if (metric == "tokens_per_s_per_user") return MetricKind::kPerUser;
  std::string base = metric;
  if (EndsWith(base, "_per_gpu")) base.resize(base.size() - 8);
  for (const char* t : {"tokens_per_s", "output_tokens_per_s", "input_tokens_per_s",
                        "total_tokens_per_s", "requests_per_s"})
    if (base == t) return MetricKind::kThroughput;
  return MetricKind::kUnknown;
}

std::optional<double> MetricValue(const Evaluation& e, const Workload& w, int gpus,
                                  const std::string& metric_in) {
  // A percentile of a steady state is its value (every request sees the same step).
  const std::optional<PercentileMetric> pct = PercentileOf(metric_in);
  std::string metric = pct ? pct->base : metric_in;
  if (metric == "tpot_ms") {
    if (w.mode == Mode::kPrefill) return std::nullopt;
    return e.tpot_s * 1e3;
  }
  if (metric == "ttft_ms") {
    if (w.mode == Mode::kDecode) return std::nullopt;
    return e.ttft_s * 1e3;
  }
  if (metric == "itl_ms") {  // one emission per step: the verified token and accepted drafts
    if (w.mode == Mode::kPrefill) return std::nullopt;
    return e.tpot_s * e.accept * 1e3;
  }
  if (metric == "e2e_ms") {  // the first token, then osl - 1 more at the TPOT
    if (w.mode != Mode::kServe) return std::nullopt;
    return (e.ttft_s + static_cast<double>(std::max<int64_t>(w.osl - 1, 0)) * e.tpot_s) * 1e3;
  }
  if (metric == "tokens_per_s_per_user") {
    // Output tokens per second one sequence sees: 1 / time per output token (with MTP the
    // simulator's tpot is already per accepted token).
    if (w.mode == Mode::kPrefill || !(e.tpot_s > 0)) return std::nullopt;
    return 1.0 / e.tpot_s;
  }
  double per = 1;
  if (EndsWith(metric, "_per_gpu")) {
    metric.resize(metric.size() - 8);
    per = gpus;
  }
  // e.tokens_per_s: output tokens (serve, decode) or input tokens (prefill) of the deployment.
  const double t = e.tokens_per_s;
  const double isl = static_cast<double>(w.isl), osl = static_cast<double>(w.osl);
  std::optional<double> v;
  if (metric == "tokens_per_s") {
    v = t;
  } else if (metric == "output_tokens_per_s") {
    if (w.mode == Mode::kPrefill) v = t / isl;  // one output token per prefilled prompt
    else v = t;
  } else if (metric == "input_tokens_per_s") {
    if (w.mode == Mode::kPrefill) v = t;
    else if (w.mode == Mode::kServe) v = t * isl / osl;  // every request brings isl tokens
  } else if (metric == "total_tokens_per_s") {
    if (w.mode == Mode::kServe) v = t * (isl + osl) / osl;
    else if (w.mode == Mode::kPrefill) v = t + t / isl;
    else v = t;
  } else if (metric == "requests_per_s") {
    if (w.mode == Mode::kServe) v = t / osl;
    else if (w.mode == Mode::kPrefill) v = t / isl;
  }
  if (!v) return std::nullopt;
  return *v / per;
}

bool ClientSimulated(const Measurement& row) {
  return row.concurrency > 0 && (row.mode == "serve" || row.mode == "disagg") &&
         (IsLatencyBase(row.metric) || PercentileOf(row.metric) ||
          row.metric == "tokens_per_s_per_user" || row.metric == "output_tokens_per_s" ||
          row.metric == "input_tokens_per_s" || row.metric == "total_tokens_per_s" ||
          row.metric == "requests_per_s");
}

int64_t OfflineRequests(const Measurement& row) {
  if (row.noted.requests > 0) return row.noted.requests;
  const std::string src = AsciiLower(row.source);
  if (EngineFamily(row.engine) == "trtllm" && src.find("perf-overview") != std::string::npos &&
      src.find("trtllm-bench") != std::string::npos)
    return PerfOverviewRequests(row.isl, row.osl);
  return 0;
}

bool OfflineSimulated(const Measurement& row, int64_t n) {
  return n > 0 && row.mode == "serve" && row.batch == 0 && row.concurrency == 0 &&
         row.metric == "output_tokens_per_s";
}

namespace {

// The row's benchmark client as the source ran it, before the work limit (ClientSpec).
serve::BenchClientSpec StatedClientSpec(const Measurement& row, int instances) {
  serve::BenchClientSpec bc;
  // `concurrency` is per instance for an aggregated row (MEASUREMENTS.md: "client requests in
  // flight for one instance", as its batch is ceil(concurrency / dp) per instance), the whole
  // deployment's for a disaggregated one ("measured for the whole deployment at concurrency").
  const int64_t clients = row.mode == "disagg" ? row.concurrency
                                               : row.concurrency * std::max(1, instances);
  bc.concurrency = static_cast<int>(std::min<int64_t>(clients, serve::kMaxBenchClients));
  bc.isl = row.isl;
  bc.osl = row.osl;
  bc.range_ratio = row.noted.length_ratio;
  bc.instances = instances;
  // The stated per-rank limit caps the running requests (of the decode pool when disaggregated);
  // unstated, the engine's own default applies (DefaultMaxRunning).
  bc.max_running = static_cast<int>(std::max<int64_t>(0, row.max_batch));
  // Instances take requests as the engine's front end hands them out (Dynamo: round-robin).
  if (engine::RoundRobinFrontEnd(row.engine)) bc.router = serve::Assign::kRoundRobin;
  // SGLang's receive interval when the notes state it (unstated: the engine's default, 1).
  if (EngineFamily(row.engine) == "sglang") bc.recv_interval = row.noted.recv_interval;
  // The prompts the notes state (unstated: 10 per client, as the InferenceX scripts send).
  if (row.noted.prompts_per_client > 0) bc.prompts_per_client = row.noted.prompts_per_client;
  bc.num_prompts = row.noted.num_prompts;
  return bc;
}

}  // namespace

serve::BenchClientSpec ClientSpec(const Measurement& row, int instances) {
  serve::BenchClientSpec bc = StatedClientSpec(row, instances);
  // The work limit: a run whose prompts x osl decode token-steps exceed kMaxClientTokenSteps
  // sends fewer prompts, as many as the limit holds and at least one per client (the mean over
  // a shorter run weighs the first wave, all clients at once, and the drain a little more).
  const double osl = static_cast<double>(std::max<int64_t>(1, row.osl));
  if (static_cast<double>(bc.Prompts()) * osl > kMaxClientTokenSteps) {
    const int64_t fit = static_cast<int64_t>(kMaxClientTokenSteps / osl);
    if (bc.num_prompts > 0)
      bc.num_prompts = std::max<int64_t>(bc.concurrency, fit);
    else
      bc.prompts_per_client =
          static_cast<int>(std::max<int64_t>(1, fit / std::max(1, bc.concurrency)));
  }
  return bc;
}

int64_t StatedPrompts(const Measurement& row, int instances) {
  return StatedClientSpec(row, instances).Prompts();
}

serve::BenchClientSpec OfflineSpec(const Measurement& row, int64_t n, int instances,
                                   int max_running) {
  serve::BenchClientSpec bc = ClientSpec(row, instances);
  bc.concurrency = static_cast<int>(n);
  bc.prompts_per_client = 1;
  bc.num_prompts = 0;
  bc.max_running = max_running;
  return bc;
}

double ClientValue(const Measurement& row, const serve::BenchClientResult& r) {
  if (row.metric == "output_tokens_per_s") return r.output_tokens_per_s;
  if (row.metric == "input_tokens_per_s") return r.summary.input_tokens_per_s;
  if (row.metric == "total_tokens_per_s")
    return r.output_tokens_per_s + r.summary.input_tokens_per_s;
  if (row.metric == "requests_per_s") return r.summary.request_rate;
  if (row.metric == "tokens_per_s_per_user") return r.mean_tpot_s > 0 ? 1 / r.mean_tpot_s : 0;
  auto of = [&](const std::string& base) -> const serve::Percentiles& {
    return base == "ttft_ms"  ? r.summary.ttft
           : base == "tpot_ms" ? r.summary.tpot
           : base == "itl_ms"  ? r.summary.itl
                               : r.summary.e2e;
  };
  if (const std::optional<PercentileMetric> pct = PercentileOf(row.metric))
    return 1e3 * of(pct->base).*(pct->stat);
  if (row.metric == "ttft_ms") return 1e3 * r.mean_ttft_s;
  if (row.metric == "tpot_ms") return 1e3 * r.mean_tpot_s;
  return 1e3 * of(row.metric).mean;
}

std::string ClientKey(const Measurement& r) {
  const NotedSettings& n = r.noted;
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{},{},{},{}|{},{},{}|{}|{},{},{},{}|{},{}|{}|{},{},{},{}|{},{},{},{}|"
      "{},{}|{},{},{},{},{},{},{},{},{},{}",
      r.engine, r.gpu, r.model_config, r.weight_dtype, r.kv_dtype, r.mode, r.overlap, r.gpus,
      r.tp, r.pp, r.dp, r.ep, r.isl, r.osl, r.context, r.batch, r.replicas, r.expert_slots, r.mtp,
      r.mtp_accept, r.max_batch, r.max_num_tokens, r.concurrency, r.prefill.gpus, r.prefill.tp,
      r.prefill.dp, r.prefill.ep, r.decode.gpus, r.decode.tp, r.decode.dp, r.decode.ep,
      r.layout_stated, r.mtp_stated, n.overlap, n.adp_balance, n.fp8_attention, n.fp8_kv,
      n.requests, n.length_ratio, n.mtp_on, n.recv_interval, n.prompts_per_client,
      n.num_prompts);
}

std::string ClientLengths(const Measurement& row, int instances) {
  const serve::BenchClientSpec bc = ClientSpec(row, instances);
  std::string prompts =
      bc.num_prompts > 0 ? fmt::format("{} clients, {} prompts", bc.concurrency, bc.num_prompts)
                         : fmt::format("{} x {} prompts", bc.concurrency, bc.prompts_per_client);
  if (const int64_t stated = StatedPrompts(row, instances); stated != bc.Prompts())
    prompts += fmt::format(" (of {}: the simulation's work limit)", stated);
  const double ratio = row.noted.length_ratio;
  return fmt::format("client: {}{}, {}", prompts,
                     instances > 1 && row.mode != "disagg"
                         ? fmt::format(" ({} per instance x {})", row.concurrency, instances)
                         : std::string(),
                     ratio < 1 ? fmt::format("isl/osl uniform {:.2g}-1.0 x nominal", ratio)
                               : std::string("isl/osl fixed at nominal"));
}

double ClientWork(const Measurement& row, int instances) {
  return static_cast<double>(ClientSpec(row, instances).Prompts()) * static_cast<double>(row.osl);
}

}  // namespace l2s::validate
