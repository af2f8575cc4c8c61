// What a measured row's metric is and how a simulation yields it: from a steady state
// (MetricValue, validate.h) or from a run of the row's benchmark client, request by request
// (serve/bench_client.h). Internal to the validate library (predict.cc is its user).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "serve/bench_client.h"
#include "validate/validate.h"

namespace l2s::validate {

// `s` ends with `suffix` and is longer than it ("x_per_gpu" but not "_per_gpu").
bool EndsWith(const std::string& s, std::string_view suffix);

// The latency metrics: time to first token, time per output token (a request's (e2e - ttft) /
// (output tokens - 1)), inter-token latency (the gap between two emissions; with MTP a burst of
// accepted tokens is one emission) and end-to-end latency, each as a mean ("tpot_ms") or a
// percentile ("p99_tpot_ms").
bool IsLatencyBase(const std::string& m);

// A percentile latency metric ("p50_ttft_ms", "p90_tpot_ms", "p99_e2e_ms"): its statistic and
// the metric's mean form ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"); nullopt for any other.
struct PercentileMetric {
  double serve::Percentiles::*stat;
  std::string base;
};
std::optional<PercentileMetric> PercentileOf(const std::string& metric);

// A serve or disagg row stating a concurrency, for a metric its benchmark client reports (mean
// or percentile TTFT, TPOT, ITL and end-to-end latency, the speed one user sees = 1 / mean TPOT,
// output, input or total tokens/s and requests/s over the whole run): all come from one
// simulation of the client, request by request, which draws the row's lengths itself, so one
// run's throughput, TPOT and TTFT are priced consistently.
bool ClientSimulated(const Measurement& row);

// The request count of an offline benchmark (every request queued at once): "<N> requests" in
// the notes, else, for a `trtllm-bench throughput` run of TensorRT-LLM's performance overview
// (source naming both), the overview's dataset size at the row's lengths
// (PerfOverviewRequests); 0 when unknown.
int64_t OfflineRequests(const Measurement& row);

// Work limit of a request-by-request run of a row, in decode token-steps (requests x osl): a
// client run sends fewer prompts (ClientSpec), at least one per client; a run still above it
// (one prompt per client), and an offline benchmark above it, keep the static model's figure.
constexpr double kMaxClientTokenSteps = 1e9;

// A serve row of an offline benchmark of `n` requests (OfflineRequests > 0; no client
// concurrency, no stated batch) reporting output tokens/s over the run: simulated request by
// request as the benchmark ran it (OfflineSpec), so the engine's admission of the queued prompts,
// the ramp and the drain at the end count, not only the steady state.
bool OfflineSimulated(const Measurement& row, int64_t n);

// The row's benchmark client over `instances` instances behind the router: its clients, and its
// prompts (10 per client unless the notes say otherwise) as many as kMaxClientTokenSteps holds.
serve::BenchClientSpec ClientSpec(const Measurement& row, int instances);
// The prompts the row's client sent (before the work limit).
int64_t StatedPrompts(const Measurement& row, int instances);

// The offline run of `n` requests as a benchmark client: the row's client (ClientSpec) with n
// clients of one prompt each, all sent at t = 0; the engine admits up to `max_running` per rank
// (the limit the row ran with) and queues the rest.
serve::BenchClientSpec OfflineSpec(const Measurement& row, int64_t n, int instances,
                                   int max_running);

// The row's metric from its client's run: totals over every instance behind the router.
double ClientValue(const Measurement& row, const serve::BenchClientResult& r);

// Every input of a row that its client run depends on: all columns but the metric, its value,
// the id and the prose (whose settings count through `noted`).
std::string ClientKey(const Measurement& r);

// The row's client run: from `runs` when another metric of the same run simulated it, else
// `simulate()` (a StatusOr<serve::BenchClientResult>), stored.
template <typename Simulate>
const StatusOr<serve::BenchClientResult>& ClientRunOf(const Measurement& row,
                                                      Predictor::ClientRuns* runs,
                                                      Simulate simulate) {
  const std::string key = ClientKey(row);
  {
    std::lock_guard<std::mutex> lock(runs->mu);
    auto it = runs->runs.find(key);
    if (it != runs->runs.end()) return it->second;
  }
  // Simulated outside the lock (PredictAll keeps one key's rows on one thread).
  StatusOr<serve::BenchClientResult> r = simulate();
  std::lock_guard<std::mutex> lock(runs->mu);
  return runs->runs.emplace(key, std::move(r)).first->second;
}

// The row's client as the output's lengths column says it ("client: 16 x 10 prompts, ...").
std::string ClientLengths(const Measurement& row, int instances);

// The decode token-steps of the row's client run (its prompts x osl), for the work limit.
double ClientWork(const Measurement& row, int instances);

}  // namespace l2s::validate
