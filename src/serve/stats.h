// Figures of a request-level run (serve/serve_sim.h): percentiles of TTFT, TPOT, inter-token
// latency and end-to-end latency, throughput, goodput; percentile SLOs ("p99_ttft_ms=2000") and
// whether a run meets them; JSON for scripts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "serve/serve_sim.h"

namespace l2s::serve {

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;  // seconds
};
// Linear interpolation between order statistics (position q (n - 1) in the sorted values).
double Quantile(std::vector<double> v, double q);
Percentiles PercentilesOf(const std::vector<double>& v);

enum class Metric : uint8_t { kTtft, kTpot, kItl, kE2e };
enum class Stat : uint8_t { kMean, kP50, kP90, kP99 };
const char* MetricName(Metric m);  // "ttft", "tpot", "itl", "e2e"
const char* StatName(Stat s);      // "mean", "p50", "p90", "p99"
// The quantile a percentile reads (0.5, 0.9, 0.99); 0 for the mean, which is none.
double StatQuantile(Stat s);

// One percentile SLO: STAT_METRIC_ms <= limit_ms.
struct Slo {
  Metric metric = Metric::kTtft;
  Stat stat = Stat::kP99;
  double limit_ms = 0;
  std::string ToText() const;  // "p99_ttft_ms=2000"
};
// "p99_ttft_ms=2000,p99_tpot_ms=50": STAT in mean|p50|p90|p99, METRIC in ttft|tpot|itl|e2e; a
// key without a STAT ("ttft_ms") is p99. Each key at most once, limits in (0, 1e9] ms.
StatusOr<std::vector<Slo>> ParseSlos(std::string_view text);
std::string SlosText(const std::vector<Slo>& slos);

// The steady-state limits a layout search reads from percentile SLOs, ms (0 = none). A
// deployment whose running limit fills runs at its steady state, every token at its steady-state
// TPOT and every prompt at its steady-state TTFT, so the tightest TTFT key bounds the steady
// TTFT and the tightest TPOT or inter-token key the steady TPOT. One rule for `l2s plan` with a
// traffic (the search and the candidates' running limits) and `l2s capacity` sizing.
struct SteadyLimits {
  double ttft_ms = 0, tpot_ms = 0;
};
SteadyLimits SteadyLimitsOf(const std::vector<Slo>& slos);

struct ServeSummary {
  int64_t requests = 0, completed = 0, preemptions = 0;
  Percentiles ttft, tpot, itl, e2e;  // seconds, over completed requests
  double makespan_s = 0;
  // Rates over the measurement window: open loop, the arrivals' span (first to last arrival: the
  // steady state, without the drain after the last arrival); closed loop, the makespan. Requests:
  // completions in the window; output tokens: each request's tokens spread evenly from its first
  // token to its finish, the part inside the window; input tokens: prompts whose first token
  // falls inside.
  double window_s = 0;
  // Open loop: the rate requests were sent at, (requests - 1) / the arrivals' span; 0 for a
  // closed loop (its clients send as requests finish).
  double offered_rps = 0;
  // Open loop: the requests arrive over less than kSteadySpanLatencies (4) x their mean end-to-end
  // latency, so the run is a burst the deployment fills with rather than its steady state at the
  // rate (an overload need not show yet: the queue-growth test compares the second and last
  // quarters of the arrivals).
  bool burst = false;
  double request_rate = 0;
  double output_tokens_per_s = 0, input_tokens_per_s = 0;
  // request_rate x the fraction of completed requests meeting every SLO's limit (each request's
  // own TTFT, TPOT, e2e; ITL by its TPOT); = request_rate without SLOs.
  double goodput_rps = 0;
  bool unstable = false;
  std::string unstable_reason;
  int64_t steps = 0, cost_calls = 0;
  int64_t kv_capacity_tokens = 0;
  double request_overhead_s = 0;  // ServeRun's: part of every TTFT and end-to-end latency
  int recv_interval = 1;          // ServeRun's: SGLang's --scheduler-recv-interval
  double peak_kv_fraction = 0;
  int64_t peak_waiting = 0;
  // Disaggregated runs: KV transfer per request (prefill done to KV at the decode instance,
  // the wait for the decode instance's KV allocation and for the link included), the prefill pool's KV per rank, and each pool's busy share
  // (stepping seconds / (instances x makespan)).
  bool disaggregated = false;
  Percentiles kv_transfer;
  // ... and the wait for the decode instance's KV allocation alone (SGLang: arrival to the
  // pre-allocation, before the prefill; the others: prefill end to the allocation).
  Percentiles decode_alloc_wait;
  int64_t prefill_kv_capacity_tokens = 0;
  int prefill_max_running = 0;  // the prefill pool's running-request limit per rank
  double prefill_busy = 0, decode_busy = 0;
  int64_t prefill_queued = 0, decode_queued = 0;  // ServeRun's: each pool's queue at the last arrival
};
ServeSummary Summarise(const ServeRun& run, const std::vector<Slo>& slos);

// The span, in mean end-to-end latencies, over which an open-loop run's requests must arrive to
// leave the deployment's fill behind (ServeSummary::burst when they arrive over less), and how
// many requests at the run's offered rate make that span (0 for a closed loop).
constexpr double kSteadySpanLatencies = 4;
double SteadyStateRequests(const ServeSummary& s);
// SteadyStateRequests rounded up to thousands, at most `max_requests`: the stream drawn again
// where a run was a burst (capacity's max-rate search, the CLI's default streams).
int64_t SteadyStreamLength(const ServeSummary& s, int64_t max_requests);

// The figure an SLO constrains, seconds.
double Figure(const ServeSummary& s, Metric m, Stat st);
// True when the run is stable and every SLO holds; `why` (may be null) gets the first miss.
bool MeetsSlos(const ServeSummary& s, const std::vector<Slo>& slos, std::string* why);

// {"requests", "completed", "unstable", "unstable_reason", "ttft_ms": {mean,p50,p90,p99},
//  "tpot_ms", "itl_ms", "e2e_ms", "request_rate", "output_tokens_per_s", "input_tokens_per_s",
//  "goodput_rps", "makespan_s", "window_s", "offered_rps" (0 closed loop), "burst", "preemptions",
//  "steps", "step_cost_calls", "kv_capacity_tokens", "request_overhead_ms", "scheduler_recv_interval",
//  "peak_kv_fraction",
//  "peak_waiting"}; percentiles null when unstable. Disaggregated runs add "disaggregated": true,
//  "kv_transfer_ms", "decode_alloc_wait_ms", "prefill_kv_capacity_tokens", "prefill_max_running",
//  "prefill_busy", "decode_busy", "prefill_queued", "decode_queued".
nlohmann::ordered_json SummaryJson(const ServeSummary& s);
// Timeline as {"t_s": [...], "waiting": [...], "running": [...], "kv_fraction": [...]}
// (disaggregated runs add "transferring").
nlohmann::ordered_json TimelineJson(const ServeRun& run);

}  // namespace l2s::serve
