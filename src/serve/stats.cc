#include "serve/stats.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace l2s::serve {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Percentiles PercentilesOf(const std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(s.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(s.size() - 1, lo + 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
  };
  double sum = 0;
  for (double x : s) sum += x;
  p.mean = sum / static_cast<double>(s.size());
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  return p;
}

const char* MetricName(Metric m) {
  switch (m) {
    case Metric::kTtft: return "ttft";
    case Metric::kTpot: return "tpot";
    case Metric::kItl: return "itl";
    case Metric::kE2e: return "e2e";
  }
  return "?";
}

double StatQuantile(Stat s) {
  switch (s) {
    case Stat::kP50: return 0.5;
    case Stat::kP90: return 0.9;
    case Stat::kP99: return 0.99;
    case Stat::kMean: break;
  }
  return 0;
}

const char* StatName(Stat s) {
  switch (s) {
    case Stat::kMean: return "mean";
    case Stat::kP50: return "p50";
    case Stat::kP90: return "p90";
    case Stat::kP99: return "p99";
  }
  return "?";
}

std::string Slo::ToText() const {
  return fmt::format("{}_{}_ms={}", StatName(stat), MetricName(metric), limit_ms);
}

SteadyLimits SteadyLimitsOf(const std::vector<Slo>& slos) {
  SteadyLimits l;
  for (const Slo& o : slos) {
    double* lim = o.metric == Metric::kTtft                               ? &l.ttft_ms
                  : o.metric == Metric::kTpot || o.metric == Metric::kItl ? &l.tpot_ms
                                                                          : nullptr;
    if (lim != nullptr) *lim = *lim > 0 ? std::min(*lim, o.limit_ms) : o.limit_ms;
  }
  return l;
}

std::string SlosText(const std::vector<Slo>& slos) {
  std::string out;
  for (const Slo& s : slos) out += (out.empty() ? "" : ",") + s.ToText();
  return out;
}

StatusOr<std::vector<Slo>> ParseSlos(std::string_view text) {
  std::vector<Slo> out;
  size_t pos = 0;
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format("--slo '{}': {}", text, why));
  };
  if (text.empty()) return bad("empty");
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = text.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) return bad("expected KEY=MS entries");
    std::string key(item.substr(0, eq));
    const std::string num(item.substr(eq + 1));
    Slo s;
    const char* stats[] = {"mean_", "p50_", "p90_", "p99_"};
    bool has_stat = false;
    for (int i = 0; i < 4; ++i) {
      if (key.rfind(stats[i], 0) == 0) {
        s.stat = static_cast<Stat>(i);
        key = key.substr(std::string_view(stats[i]).size());
        has_stat = true;
        break;
      }
    }
    if (!has_stat) s.stat = Stat::kP99;
    const char* metrics[] = {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"};
    bool found = false;
    for (int i = 0; i < 4; ++i)
      if (key == metrics[i]) {
        s.metric = static_cast<Metric>(i);
        found = true;
      }
    if (!found)
      return bad(fmt::format("unknown key '{}' (STAT_METRIC_ms: STAT mean|p50|p90|p99, METRIC "
                             "ttft|tpot|itl|e2e)",
                             item.substr(0, eq)));
    char* end = nullptr;
    s.limit_ms = std::strtod(num.c_str(), &end);
    if (num.empty() || *end != '\0' || !(s.limit_ms > 0 && s.limit_ms <= 1e9))
      return bad(fmt::format("'{}' is not a number of milliseconds in (0, 1e9]", num));
    for (const Slo& o : out)
      if (o.metric == s.metric && o.stat == s.stat) return bad("a key is given twice");
    out.push_back(s);
    if (comma >= text.size()) break;
  }
  return out;
}

ServeSummary Summarise(const ServeRun& run, const std::vector<Slo>& slos) {
  ServeSummary s;
  s.requests = static_cast<int64_t>(run.requests.size());
  s.unstable = run.unstable;
  s.unstable_reason = run.unstable_reason;
  s.steps = run.steps;
  s.cost_calls = run.cost_calls;
  s.kv_capacity_tokens = run.kv_capacity_tokens;
  s.request_overhead_s = run.request_overhead_s;
  s.recv_interval = run.recv_interval;
  s.makespan_s = run.makespan_s;
  std::vector<double> ttft, tpot, e2e, xfer, alloc_wait;
  int64_t good = 0;
  // Per-request limits: the tightest limit of each metric (a request "meets" an SLO when its own
  // figure is within the limit; ITL limits are checked against the request's TPOT).
  double lim[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  for (const Slo& o : slos) {
    const int m = static_cast<int>(o.metric);
    lim[m] = std::min(lim[m], o.limit_ms / 1e3);
  }
  for (const RequestOutcome& o : run.requests) {
    s.preemptions += o.preemptions;
    if (!o.done()) continue;
    ++s.completed;
    ttft.push_back(o.ttft_s());
    e2e.push_back(o.e2e_s());
    if (o.output > 1) tpot.push_back(o.tpot_s());
    if (o.kv_ready_s >= 0) xfer.push_back(o.kv_ready_s - o.prefill_end_s);
    if (o.kv_alloc_s >= 0)
      alloc_wait.push_back(o.kv_alloc_s -
                           (o.kv_alloc_s >= o.prefill_end_s ? o.prefill_end_s : o.engine_s));
    const double tp = o.tpot_s();
    if (o.ttft_s() <= lim[0] && tp <= lim[1] && tp <= lim[2] && o.e2e_s() <= lim[3]) ++good;
  }
  s.ttft = PercentilesOf(ttft);
  s.tpot = PercentilesOf(tpot);
  s.e2e = PercentilesOf(e2e);
  s.itl.mean = run.itl.Mean();
  s.itl.p50 = run.itl.Quantile(0.5);
  s.itl.p90 = run.itl.Quantile(0.9);
  s.itl.p99 = run.itl.Quantile(0.99);
  double w0 = INFINITY, w1 = -INFINITY, last_finish = -INFINITY;
  for (const RequestOutcome& o : run.requests) {
    w0 = std::min(w0, o.arrival_s);
    w1 = std::max(w1, o.arrival_s);
    if (o.done()) last_finish = std::max(last_finish, o.finish_s);
  }
  if (run.closed_loop) w1 = last_finish;
  s.window_s = w1 > w0 ? w1 - w0 : 0;
  if (!run.closed_loop && s.window_s > 0)
    s.offered_rps = static_cast<double>(run.requests.size() - 1) / s.window_s;
  if (s.window_s > 0 && s.completed > 0) {
    double done = 0, out = 0, in = 0;
    for (const RequestOutcome& o : run.requests) {
      if (!o.done()) continue;
      if (o.finish_s >= w0 && o.finish_s <= w1) done += 1;
      if (o.first_token_s >= w0 && o.first_token_s <= w1) in += static_cast<double>(o.prompt);
      const double a = o.first_token_s, b = o.finish_s;
      if (b > a) {
        const double inside = std::max(0.0, std::min(b, w1) - std::max(a, w0));
        out += static_cast<double>(o.output) * inside / (b - a);
      } else if (a >= w0 && a <= w1) {
        out += static_cast<double>(o.output);
      }
    }
    s.request_rate = done / s.window_s;
    s.output_tokens_per_s = out / s.window_s;
    s.input_tokens_per_s = in / s.window_s;
    s.goodput_rps = s.request_rate * static_cast<double>(good) / static_cast<double>(s.completed);
  }
  s.burst = s.offered_rps > 0 && s.completed > 0 && s.window_s < kSteadySpanLatencies * s.e2e.mean;
  if (run.disaggregated) {
    s.disaggregated = true;
    s.kv_transfer = PercentilesOf(xfer);
    s.decode_alloc_wait = PercentilesOf(alloc_wait);
    s.prefill_kv_capacity_tokens = run.prefill_kv_capacity_tokens;
    s.prefill_max_running = run.prefill_max_running;
    s.prefill_queued = run.prefill_queued;
    s.decode_queued = run.decode_queued;
    if (run.makespan_s > 0) {
      s.prefill_busy = run.prefill_busy_s / (run.prefill_instances * run.makespan_s);
      s.decode_busy = run.decode_busy_s / (run.instances * run.makespan_s);
    }
  }
  for (const TimelinePoint& p : run.timeline) {
    s.peak_kv_fraction = std::max(s.peak_kv_fraction, p.kv_fraction);
    s.peak_waiting = std::max(s.peak_waiting, p.waiting);
  }
  return s;
}

double Figure(const ServeSummary& s, Metric m, Stat st) {
  const Percentiles& p = m == Metric::kTtft ? s.ttft
                         : m == Metric::kTpot ? s.tpot
                         : m == Metric::kItl  ? s.itl
                                              : s.e2e;
  switch (st) {
    case Stat::kMean: return p.mean;
    case Stat::kP50: return p.p50;
    case Stat::kP90: return p.p90;
    case Stat::kP99: return p.p99;
  }
  return p.p99;
}

namespace {
// `v` with the fewest decimals (1 to 4) that still read above `limit`: "30.04", not "30.0 > 30".
std::string AboveLimitText(double v, double limit) {
  for (int digits = 1; digits < 4; ++digits) {
    const std::string t = fmt::format("{:.{}f}", v, digits);
    if (std::stod(t) > limit) return t;
  }
  return fmt::format("{:.4f}", v);
}
}  // namespace

bool MeetsSlos(const ServeSummary& s, const std::vector<Slo>& slos, std::string* why) {
  if (s.unstable) {
    if (why) *why = s.unstable_reason;
    return false;
  }
  for (const Slo& o : slos) {
    const double v = Figure(s, o.metric, o.stat) * 1e3;
    if (v > o.limit_ms) {
      if (why)
        *why = fmt::format("{} {} {} ms > {} ms", StatName(o.stat), MetricName(o.metric),
                           AboveLimitText(v, o.limit_ms), o.limit_ms);
      return false;
    }
  }
  if (why) why->clear();
  return true;
}

namespace {
nlohmann::ordered_json PJson(const Percentiles& p, bool unstable) {
  if (unstable) return nullptr;
  nlohmann::ordered_json j;
  j["mean"] = p.mean * 1e3;
  j["p50"] = p.p50 * 1e3;
  j["p90"] = p.p90 * 1e3;
  j["p99"] = p.p99 * 1e3;
  return j;
}
}  // namespace

double SteadyStateRequests(const ServeSummary& s) {
  return kSteadySpanLatencies * s.e2e.mean * s.offered_rps;
}

int64_t SteadyStreamLength(const ServeSummary& s, int64_t max_requests) {
  return std::min<int64_t>(max_requests,
                           1000 * static_cast<int64_t>(std::ceil(SteadyStateRequests(s) / 1000)));
}

nlohmann::ordered_json SummaryJson(const ServeSummary& s) {
  nlohmann::ordered_json j;
  j["requests"] = s.requests;
  j["completed"] = s.completed;
  j["unstable"] = s.unstable;
  j["unstable_reason"] = s.unstable_reason;
  j["ttft_ms"] = PJson(s.ttft, s.unstable);
  j["tpot_ms"] = PJson(s.tpot, s.unstable);
  j["itl_ms"] = PJson(s.itl, s.unstable);
  j["e2e_ms"] = PJson(s.e2e, s.unstable);
  j["request_rate"] = s.request_rate;
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["input_tokens_per_s"] = s.input_tokens_per_s;
  j["goodput_rps"] = s.goodput_rps;
  j["makespan_s"] = s.makespan_s;
  j["window_s"] = s.window_s;
  j["offered_rps"] = s.offered_rps;
  j["burst"] = s.burst;
  j["preemptions"] = s.preemptions;
  j["steps"] = s.steps;
  j["step_cost_calls"] = s.cost_calls;
  j["kv_capacity_tokens"] = s.kv_capacity_tokens;
  j["request_overhead_ms"] = s.request_overhead_s * 1e3;
  j["scheduler_recv_interval"] = s.recv_interval;
  j["peak_kv_fraction"] = s.peak_kv_fraction;
  j["peak_waiting"] = s.peak_waiting;
  if (s.disaggregated) {
    j["disaggregated"] = true;
    j["kv_transfer_ms"] = PJson(s.kv_transfer, s.unstable);
    j["decode_alloc_wait_ms"] = PJson(s.decode_alloc_wait, s.unstable);
    j["prefill_kv_capacity_tokens"] = s.prefill_kv_capacity_tokens;
    j["prefill_max_running"] = s.prefill_max_running;
    j["prefill_busy"] = s.prefill_busy;
    j["decode_busy"] = s.decode_busy;
    j["prefill_queued"] = s.prefill_queued;
    j["decode_queued"] = s.decode_queued;
  }
  return j;
}

nlohmann::ordered_json TimelineJson(const ServeRun& run) {
  nlohmann::ordered_json j;
  std::vector<double> t, kv;
  std::vector<int64_t> w, r, x;
  for (const TimelinePoint& p : run.timeline) {
    t.push_back(p.t_s);
    x.push_back(p.transferring);
    w.push_back(p.waiting);
    r.push_back(p.running);
    kv.push_back(p.kv_fraction);
  }
  j["t_s"] = t;
  j["waiting"] = w;
  j["running"] = r;
  j["kv_fraction"] = kv;
  if (run.disaggregated) j["transferring"] = x;
  return j;
}

}  // namespace l2s::serve
