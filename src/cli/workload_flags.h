// The traffic flags `l2s capacity` and `l2s plan` share (docs/CAPACITY.md), parsed by one piece
// of code: --rate R [--burstiness B] [--requests N] | --concurrency N [--requests N] |
// --trace FILE; --isl-dist / --osl-dist fixed|uniform:R|lognormal:S; --prefix-hit H;
// --rank-assign; --router; --scheduler-recv-interval. (--seed, --isl, --osl and --max-batch are the command's own flags.)
// Also: the percentile summary as text, and plan's --slo split into steady-state and percentile
// keys.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "plan/cost.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/workload.h"

namespace l2s::cli {

struct TrafficFlags {
  double rate = 0, burstiness = 1;
  int concurrency = 0;
  int64_t requests = 0;
  std::string isl_dist = "fixed", osl_dist = "fixed";
  double prefix_hit = 0;
  std::string trace;
  std::string rank_assign = "default", router = "default";
  int recv_interval = 1;  // --scheduler-recv-interval (SGLang; serve::ServeOptions)
  // The engine the command plans for (its --engine, set by the command, not a flag of its own):
  // --router default is that engine's front end (engine layer round_robin_router: Dynamo's
  // frontend takes instances in turn; the others' routers the least-loaded instance).
  std::string engine;
  // A traffic is given: --rate, --concurrency or --trace.
  bool given() const { return rate > 0 || concurrency > 0 || !trace.empty(); }
  // The first flag that shapes a simulated traffic set away from its default ("--router",
  // "--isl-dist", ...), "" when none: without a traffic such a flag would change nothing.
  std::string FirstDetailFlag() const;
};

void AddTrafficFlags(CLI::App* cmd, TrafficFlags* f);
// The request stream at nominal lengths isl/osl (open loop default 2,000 requests).
// A default open-loop stream (no --requests, no --trace) of `current` requests that a command's
// chosen run took as a burst (ServeSummary::burst) and stayed stable on (an unstable run shows the
// overload already): SteadyStream draws it again as TrafficRequests does (same seed), with
// serve::SteadyStateRequests of that run rounded up to thousands, at most kMaxDefaultRequests,
// and prints on stderr what `command` does ("l2s capacity: the 2000 requests arrive as a burst
// (...): simulating again on 12,000 requests"); an empty stream when `f` is not such a stream,
// the run was no burst or unstable, or the stream cannot grow.
constexpr int64_t kMaxDefaultRequests = 50000;
StatusOr<std::vector<serve::RequestSpec>> SteadyStream(const TrafficFlags& f,
                                                       const serve::ServeSummary& run,
                                                       size_t current, int64_t isl, int64_t osl,
                                                       uint64_t seed, const std::string& command);
// The default open-loop stream's traffic drawn with n requests (TrafficRequests, same seed),
// for a max-rate search whose answer ran its stream as a burst (serve::MaxRateOptions::longer);
// null when `f` is not a default open-loop stream (a user's --requests, a trace, a closed loop):
// that stream is the user's. Silent (the searches say what they drew in their results).
std::function<StatusOr<std::vector<serve::RequestSpec>>(int64_t n)> LongerStream(
    const TrafficFlags& f, int64_t isl, int64_t osl, uint64_t seed);
// What `gpus` GPUs of problem `p` serving the run `s` cost (plan/cost.h): at the user's price
// (--price-per-gpu-hour) per hour and per million tokens at the output tokens/s the run served,
// and tokens per joule at the GPUs' board power; capacity's price of a deployment and plan's
// `cost_at_traffic`.
plan::Cost ServedCost(const Problem& p, int gpus, const serve::ServeSummary& s);
// SteadyStream's loop, as capacity sizing and plan with a traffic run it: up to twice, the run
// that decides the answer (`decisive()`; null: none, stop) is given to SteadyStream, and when it
// draws a longer stream *reqs becomes it and `rerun()` simulates the answer again on it. Errors:
// SteadyStream's and rerun's.
Status RedrawWhileABurst(const TrafficFlags& f, int64_t isl, int64_t osl, uint64_t seed,
                         const std::string& command, std::vector<serve::RequestSpec>* reqs,
                         const std::function<const serve::ServeSummary*()>& decisive,
                         const std::function<Status()>& rerun);
StatusOr<std::vector<serve::RequestSpec>> TrafficRequests(const TrafficFlags& f, int64_t isl,
                                                          int64_t osl, uint64_t seed);
// The closed loop's client count for ServeSim::Run (0 for open loop and traces).
int TrafficConcurrency(const TrafficFlags& f);
// --rank-assign, --router (default: f.engine's front end), --scheduler-recv-interval (an SGLang
// setting: an error when f.engine names another engine) and the max running requests per rank
// (0 = the engine's).
StatusOr<serve::ServeOptions> TrafficServeOptions(const TrafficFlags& f, int max_running);
// "2000 requests, open loop at 4 req/s (Poisson), isl 1024 fixed, osl 256 fixed"-like words.
std::string TrafficText(const TrafficFlags& f, int64_t n, int64_t isl, int64_t osl);

// How the requests were sent, in words: the asked rate and the drawn stream's (a Poisson stream
// of 2,000 requests at 20 req/s averages 19.5 over its span), a trace's file, or the clients.
std::string StreamWords(const TrafficFlags& t, const std::vector<serve::RequestSpec>& reqs);

// A closed loop's clients send their first prompts together (as benchmark clients do), so with a
// TTFT percentile among `slos` that first wave (min(N, requests) of them) can set the answer: one
// line saying so, ending in a newline; "" for an open loop, a trace, or no TTFT percentile.
std::string FirstWaveNote(const TrafficFlags& t, size_t requests, const std::vector<serve::Slo>& slos);

// Milliseconds with one decimal.
std::string MsText(double seconds);
// The percentile table of a run (mean, p50, p90, p99 of TTFT, TPOT, inter-token, end-to-end) and
// its throughput line; one line when unstable.
std::string ServeSummaryText(const serve::ServeSummary& s);

// plan's --slo: keys with a statistic prefix (mean_, p50_, p90_, p99_) are percentile SLOs of the
// simulated traffic; ttft_ms and tpot_ms stay the steady state's limits. `steady` gets the
// latter as text (for ParseSlo), `percentile` the former as text (for serve::ParseSlos).
void SplitSloKeys(const std::string& text, std::string* steady, std::string* percentile);

}  // namespace l2s::cli
