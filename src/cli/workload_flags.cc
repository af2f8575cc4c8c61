#include "cli/workload_flags.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "cli/problem_flags.h"
#include "cli/report.h"
#include "plan/capacity.h"
#include "sim/simulator.h"

namespace l2s::cli {

void AddTrafficFlags(CLI::App* cmd, TrafficFlags* f) {
  cmd->add_option("--rate", f->rate, "traffic, open loop: requests/s")->check(FiniteRange(0.0, 1e6));
  cmd->add_option("--burstiness", f->burstiness, "gamma shape of inter-arrival times (1 = Poisson)");
  cmd->add_option("--concurrency", f->concurrency, "traffic, closed loop: clients in flight")
      ->check(CountRange(serve::kMaxConcurrency));
  cmd->add_option("--requests", f->requests,
                  "requests to simulate (open loop default 2000, and capacity sizing draws more when "
                  "2000 arrive as a burst; closed loop 10 x concurrency)")
      ->check(CountRange(serve::kMaxRequests));
  cmd->add_option("--isl-dist", f->isl_dist, "fixed | uniform:R | lognormal:S (default fixed)");
  cmd->add_option("--osl-dist", f->osl_dist, "fixed | uniform:R | lognormal:S (default fixed)");
  cmd->add_option("--prefix-hit", f->prefix_hit, "fraction of each prompt in the prefix cache");
  cmd->add_option("--trace", f->trace,
                  "traffic from a CSV arrival_s,prompt_tokens,output_tokens[,cached_tokens]");
  cmd->add_option("--rank-assign", f->rank_assign,
                  "attention-DP request placement: default | round-robin | shortest-queue");
  cmd->add_option("--router", f->router,
                  "instance router: default (the engine's front end: Dynamo round-robin, the others "
                  "shortest-queue) | shortest-queue | round-robin");
  cmd->add_option("--scheduler-recv-interval", f->recv_interval,
                  "SGLang's --scheduler-recv-interval N: its scheduler takes new requests only "
                  "every N decode steps (default 1)");
}

std::string TrafficFlags::FirstDetailFlag() const {
  const TrafficFlags d;  // every flag at its default
  if (burstiness != d.burstiness) return "--burstiness";
  if (requests != d.requests) return "--requests";
  if (isl_dist != d.isl_dist) return "--isl-dist";
  if (osl_dist != d.osl_dist) return "--osl-dist";
  if (prefix_hit != d.prefix_hit) return "--prefix-hit";
  if (rank_assign != d.rank_assign) return "--rank-assign";
  if (router != d.router) return "--router";
  if (recv_interval != d.recv_interval) return "--scheduler-recv-interval";
  return "";
}

StatusOr<std::vector<serve::RequestSpec>> TrafficRequests(const TrafficFlags& f, int64_t isl,
                                                          int64_t osl, uint64_t seed) {
  if (!f.trace.empty()) {
    if (f.rate > 0 || f.concurrency > 0)
      return Status::InvalidArgument("--trace: give no --rate or --concurrency with a trace");
    return serve::LoadTrace(f.trace);
  }
  if (f.rate > 0 && f.concurrency > 0)
    return Status::InvalidArgument(
        "--rate and --concurrency are two workloads (open loop, closed loop): give one");
  serve::WorkloadSpec w;
  w.rate_rps = f.rate;
  w.burstiness = f.burstiness;
  w.concurrency = f.concurrency;
  w.num_requests = f.requests;
  w.isl = isl;
  w.osl = osl;
  auto id = serve::ParseLengthDist(f.isl_dist);
  if (!id.ok()) return Status::InvalidArgument("--isl-dist: " + id.status().message());
  auto od = serve::ParseLengthDist(f.osl_dist);
  if (!od.ok()) return Status::InvalidArgument("--osl-dist: " + od.status().message());
  w.isl_dist = *id;
  w.osl_dist = *od;
  w.prefix_hit = f.prefix_hit;
  w.seed = seed;
  if (w.rate_rps > 0 && w.num_requests == 0) w.num_requests = 2000;
  return serve::GenerateRequests(w);
}

plan::Cost ServedCost(const Problem& p, int gpus, const serve::ServeSummary& s) {
  return plan::CostOf(gpus > 0 ? s.output_tokens_per_s / gpus : 0.0, p.workload, p.cluster, gpus);
}

Status RedrawWhileABurst(const TrafficFlags& f, int64_t isl, int64_t osl, uint64_t seed,
                         const std::string& command, std::vector<serve::RequestSpec>* reqs,
                         const std::function<const serve::ServeSummary*()>& decisive,
                         const std::function<Status()>& rerun) {
  for (int again = 0; again < 2; ++again) {
    const serve::ServeSummary* run = decisive();
    if (run == nullptr) break;
    auto more = SteadyStream(f, *run, reqs->size(), isl, osl, seed, command);
    if (!more.ok()) return more.status();
    if (more->empty()) break;
    *reqs = std::move(*more);
    if (Status st = rerun(); !st.ok()) return st;
  }
  return Status::Ok();
}

StatusOr<std::vector<serve::RequestSpec>> SteadyStream(const TrafficFlags& f,
                                                       const serve::ServeSummary& run,
                                                       size_t current, int64_t isl, int64_t osl,
                                                       uint64_t seed, const std::string& command) {
  if (f.requests != 0 || !f.trace.empty() || f.rate <= 0 || !run.burst || run.unstable)
    return std::vector<serve::RequestSpec>{};
  const auto have = static_cast<int64_t>(current);
  const int64_t n = serve::SteadyStreamLength(run, kMaxDefaultRequests);
  if (n <= have) return std::vector<serve::RequestSpec>{};
  fmt::print(stderr,
             "l2s {}: the {} requests arrive as a burst (over {:.1f} s, less than {:g}x their "
             "mean end-to-end latency, {:.1f} s): simulating again on {} requests{}\n",
             command, current, run.window_s, serve::kSteadySpanLatencies, run.e2e.mean,
             Thousands(static_cast<double>(n)),
             n == kMaxDefaultRequests ? " (the default's cap; --requests sets the stream)" : "");
  TrafficFlags longer = f;
  longer.requests = n;
  return TrafficRequests(longer, isl, osl, seed);
}

std::function<StatusOr<std::vector<serve::RequestSpec>>(int64_t n)> LongerStream(
    const TrafficFlags& f, int64_t isl, int64_t osl, uint64_t seed) {
  if (f.requests != 0 || !f.trace.empty() || f.rate <= 0) return nullptr;
  return [f, isl, osl, seed](int64_t n) {
    TrafficFlags longer = f;
    longer.requests = n;
    return TrafficRequests(longer, isl, osl, seed);
  };
}

int TrafficConcurrency(const TrafficFlags& f) { return f.trace.empty() ? f.concurrency : 0; }

StatusOr<serve::ServeOptions> TrafficServeOptions(const TrafficFlags& f, int max_running) {
  serve::ServeOptions o;
  if (!serve::ParseAssign(f.rank_assign, &o.rank_assign))
    return Status::InvalidArgument("--rank-assign: expected default, round-robin or shortest-queue");
  if (!serve::ParseAssign(f.router, &o.router))
    return Status::InvalidArgument("--router: expected default, round-robin or shortest-queue");
  // Without an engine the router stays kEngineDefault: capacity's sizing resolves it for each
  // engine it sizes (plan::SizedServeOptions), the simulator takes it as shortest-queue.
  if (o.router == serve::Assign::kEngineDefault && !f.engine.empty())
    o.router = plan::FrontEndRouter(f.engine);
  o.max_running = max_running;
  if (f.recv_interval < 1 || f.recv_interval > 1'000'000)
    return Status::InvalidArgument("--scheduler-recv-interval: expected 1 to 1000000 decode steps");
  if (f.recv_interval > 1 && !f.engine.empty() && EngineFamily(f.engine) != "sglang")
    return Status::InvalidArgument(fmt::format(
        "--scheduler-recv-interval is an SGLang setting; --engine is {}", f.engine));
  o.sglang_recv_interval = f.recv_interval;
  return o;
}

std::string TrafficText(const TrafficFlags& f, int64_t n, int64_t isl, int64_t osl) {
  std::string how;
  if (!f.trace.empty()) how = fmt::format("trace {}", f.trace);
  else if (f.concurrency > 0) how = fmt::format("closed loop, {} clients", f.concurrency);
  else
    how = fmt::format("open loop at {:g} req/s ({})", f.rate,
                      f.burstiness == 1 ? std::string("Poisson")
                                        : fmt::format("burstiness {:g}", f.burstiness));
  if (!f.trace.empty()) return fmt::format("{} requests, {}", n, how);
  return fmt::format("{} requests, {}, isl {} {}, osl {} {}{}", n, how, isl, f.isl_dist, osl,
                     f.osl_dist,
                     f.prefix_hit > 0 ? fmt::format(", prefix hit {:g}", f.prefix_hit) : "");
}

std::string MsText(double s) { return fmt::format("{:.1f}", s * 1e3); }

std::string ServeSummaryText(const serve::ServeSummary& s) {
  if (s.unstable) return fmt::format("  UNSTABLE: {}\n", s.unstable_reason);
  std::string o;
  o += fmt::format("  {:<14} {:>9} {:>9} {:>9} {:>9}   (ms)\n", "", "mean", "p50", "p90", "p99");
  auto row = [&](const char* name, const serve::Percentiles& p) {
    o += fmt::format("  {:<14} {:>9} {:>9} {:>9} {:>9}\n", name, MsText(p.mean), MsText(p.p50),
                     MsText(p.p90), MsText(p.p99));
  };
  row("TTFT", s.ttft);
  row("TPOT", s.tpot);
  row("inter-token", s.itl);
  row("end-to-end", s.e2e);
  // Open loop: the completions are counted over the arrivals' span, whose start is the ramp-up
  // (few requests running yet): said beside the rate the requests were sent at.
  o += fmt::format(
      "  {} of {} requests done in {:.1f} s; {}: {:.2f} req/s, {} output tokens/s, "
      "goodput {:.2f} req/s; {} preemptions; peak KV {:.0f}% of {} tokens per rank, peak queue "
      "{}\n",
      s.completed, s.requests, s.makespan_s,
      s.offered_rps > 0 ? fmt::format("sent at {:.2f} req/s over {:.1f} s; done in that span "
                                      "(ramp-up included)",
                                      s.offered_rps, s.window_s)
                        : fmt::format("over {:.1f} s", s.window_s),
      s.request_rate,
      Thousands(s.output_tokens_per_s), s.goodput_rps, s.preemptions, 100 * s.peak_kv_fraction,
      Thousands(s.kv_capacity_tokens), s.peak_waiting);
  if (s.burst)
    o += fmt::format(
        "  a burst, not a steady state: the requests arrive over {:.1f} s, less than {:g} x "
        "their mean end-to-end latency ({:.1f} s), so the deployment is still filling when the "
        "last arrives and an overload need not show; about {} requests at this rate simulate "
        "one (--requests N, or a longer --trace)\n",
        s.window_s, serve::kSteadySpanLatencies, s.e2e.mean, Thousands(std::ceil(serve::SteadyStateRequests(s))));
  if (s.request_overhead_s > 0)
    o += fmt::format("  TTFT and end-to-end include the engine's request overhead, {:.1f} ms per "
                     "request before it reaches the engine\n",
                     s.request_overhead_s * 1e3);
  if (s.recv_interval > 1)
    o += fmt::format("  SGLang's scheduler takes new requests every {} decode steps "
                     "(--scheduler-recv-interval); a request that arrives while it decodes waits "
                     "for that point\n",
                     s.recv_interval);
  if (s.disaggregated)
    o += fmt::format("  KV transfer (queue + link) mean {} ms, p99 {} ms; busy: prefill pool {:.0f}%, "
                     "decode pool {:.0f}%; prefill KV {} tokens per rank, max running {} per rank\n",
                     MsText(s.kv_transfer.mean), MsText(s.kv_transfer.p99), 100 * s.prefill_busy,
                     100 * s.decode_busy, Thousands(s.prefill_kv_capacity_tokens),
                     s.prefill_max_running);
  return o;
}

void SplitSloKeys(const std::string& text, std::string* steady, std::string* percentile) {
  steady->clear();
  percentile->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t c = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, c - pos);
    bool pct = false;
    for (const char* pre : {"mean_", "p50_", "p90_", "p99_"})
      if (item.rfind(pre, 0) == 0) pct = true;
    std::string* to = pct ? percentile : steady;
    if (item.empty()) *steady += ",";  // ParseSlo names the stray comma
    else *to += (to->empty() ? "" : ",") + item;
    if (c >= text.size()) break;
    pos = c + 1;
  }
}

std::string StreamWords(const TrafficFlags& t, const std::vector<serve::RequestSpec>& reqs) {
  const double drawn = serve::StreamRate(reqs);
  if (!t.trace.empty()) return fmt::format("from {} at {:.3g} req/s", t.trace, drawn);
  if (t.concurrency > 0)
    return fmt::format("from {} concurrent client{}", t.concurrency, t.concurrency == 1 ? "" : "s");
  return fmt::format("at {:.3g} req/s ({}; the drawn stream: {:.3g} req/s)", t.rate,
                     t.burstiness == 1 ? std::string("Poisson")
                                       : fmt::format("gamma arrivals, burstiness {:.3g}",
                                                     t.burstiness),
                     drawn);
}

std::string FirstWaveNote(const TrafficFlags& t, size_t requests, const std::vector<serve::Slo>& slos) {
  const int n = TrafficConcurrency(t);
  const bool ttft_percentile = std::any_of(slos.begin(), slos.end(), [](const serve::Slo& o) {
    return o.metric == serve::Metric::kTtft && o.stat != serve::Stat::kMean;
  });
  if (n <= 0 || !ttft_percentile) return "";
  return fmt::format(
      "note: the {} clients send their first prompts at once, as benchmark clients do ({} of the "
      "{} requests); a TTFT percentile may be decided by that first wave (more prompts per client, "
      "--requests, dilute it)\n",
      n, std::min<size_t>(static_cast<size_t>(n), requests), requests);
}

}  // namespace l2s::cli
