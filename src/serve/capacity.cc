#include "serve/capacity.h"

#include "common/parallel.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace l2s::serve {
namespace {

// The stream at `rate`; at an infinite rate every request arrives at time 0 (a burst).
std::vector<RequestSpec> AtRate(const std::vector<RequestSpec>& unit, double rate) {
  std::vector<RequestSpec> out = unit;
  for (RequestSpec& r : out) r.arrival_s = std::isinf(rate) ? 0 : r.arrival_s / rate;
  return out;
}

RateProbe Probe(ServeSim* sim, const std::vector<RequestSpec>& unit, const std::vector<Slo>& slos,
                double rate) {
  RateProbe p;
  p.rate_rps = rate;
  const ServeRun run = sim->Run(AtRate(unit, rate));
  p.summary = Summarise(run, slos);
  p.meets = MeetsSlos(p.summary, slos, &p.why);
  return p;
}

}  // namespace

double StreamRate(const std::vector<RequestSpec>& r) {
  if (r.size() < 2) return 0;
  const double span = r.back().arrival_s - r.front().arrival_s;
  return span > 0 ? static_cast<double>(r.size() - 1) / span : 0;
}

std::vector<RequestSpec> ToUnitRate(const std::vector<RequestSpec>& requests) {
  const double rate = StreamRate(requests);
  std::vector<RequestSpec> out = requests;
  if (rate <= 0) return out;
  const double t0 = requests.front().arrival_s;
  for (RequestSpec& r : out) r.arrival_s = (r.arrival_s - t0) * rate;
  return out;
}

void MeanLengths(const std::vector<RequestSpec>& requests, int64_t* isl, int64_t* osl) {
  for (const RequestSpec& r : requests) {
    *isl += r.prompt;
    *osl += r.output;
  }
  const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(requests.size()));
  *isl = std::max<int64_t>(1, *isl / n);
  *osl = std::max<int64_t>(1, *osl / n);
}

namespace {

// Sizing needs only whether a run meets the SLOs: each TTFT percentile SLO becomes an early
// stop (ServeOptions::ttft_stops), exact - a stopped run misses that SLO whatever the rest would
// have done - so an overloaded size costs the simulation up to its certain miss, not to the end.

ServeOptions WithTtftStops(ServeOptions so, const std::vector<Slo>& slos) {
  for (const Slo& s : slos) {
    if (s.metric != Metric::kTtft || s.stat == Stat::kMean) continue;
    so.ttft_stops.push_back({s.limit_ms / 1e3, StatQuantile(s.stat)});
  }
  return so;
}
}  // namespace

double SteadyStateRps(const StepCost& cost, int64_t isl, int64_t osl) {
  Problem p = cost.sim().problem();
  p.workload.mode = Mode::kServe;
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.workload.ttft_ms = p.workload.tpot_ms = 0;
  const Simulator sim(p);
  Strategy s = cost.strategy();
  s.batch = 0;
  const Evaluation e = sim.EvaluateWithoutBreakdown(s);
  if (!e.valid() || osl <= 0) return 0;
  return e.tokens_per_s / static_cast<double>(osl);
}

namespace {

// One bisection of MaxRate on the fixed stream `unit`.
StatusOr<MaxRateResult> MaxRateOn(ServeSim* sim, const std::vector<RequestSpec>& unit,
                                  const std::vector<Slo>& slos, double hint_rps,
                                  const MaxRateOptions& opt) {
  if (unit.size() < 2) return Status::InvalidArgument("max rate: needs at least 2 requests");
  if (!(opt.rel_tol > 0 && opt.rel_tol < 1))
    return Status::InvalidArgument("max rate: the tolerance must be in (0, 1)");
  if (!(hint_rps > 0) || !std::isfinite(hint_rps)) hint_rps = 1;
  MaxRateResult res;
  int probes = 0;
  auto probe = [&](double rate) {
    RateProbe p = Probe(sim, unit, slos, rate);
    res.probes.push_back(p);
    ++probes;
    return p;
  };
  // Bracket: a passing rate below, a failing one above. A stream that passes at every rate
  // (too few requests to load the deployment) has no failing rate: after a few passes in a row
  // the burst (every request at once, the heaviest load the stream can put) settles it.
  double hi = 2 * hint_rps;
  RateProbe ph = probe(hi);
  int passes = 0;
  while (ph.meets && probes < opt.max_probes) {
    res.found = true;
    res.rate_rps = hi;
    res.at = ph;
    if (++passes == kBurstAfterPasses && probes < opt.max_probes) {
      RateProbe burst = probe(std::numeric_limits<double>::infinity());
      if (burst.meets) {
        res.unbounded = true;
        res.rate_rps = burst.rate_rps;
        res.at = burst;
        return res;
      }
      if (probes >= opt.max_probes) break;
    }
    hi *= 2;
    ph = probe(hi);
  }
  if (ph.meets) return res;  // work limit reached while still passing
  res.fail_rps = hi;
  double lo = res.found ? res.rate_rps : 0;
  if (!res.found) {
    // Walk down by factors of 4 to a passing rate (at most down to hint / 4^6).
    double r = hi / 4;
    for (int k = 0; k < 7 && probes < opt.max_probes; ++k, r /= 4) {
      RateProbe p = probe(r);
      if (p.meets) {
        res.found = true;
        res.rate_rps = lo = r;
        res.at = p;
        break;
      }
      res.fail_rps = hi = r;
    }
    if (!res.found) return res;
  }
  while (hi - lo > opt.rel_tol * hi && probes < opt.max_probes) {
    const double mid = 0.5 * (lo + hi);
    RateProbe p = probe(mid);
    if (p.meets) {
      lo = mid;
      res.rate_rps = mid;
      res.at = p;
    } else {
      hi = mid;
      res.fail_rps = mid;
    }
  }
  return res;
}

}  // namespace

Status SearchPastBurst(ServeSim* sim, const std::vector<Slo>& slos, const MaxRateOptions& opt,
                       MaxRateResult* res) {
  auto a_burst = [](const MaxRateResult& r) {
    return r.found && !r.unbounded && r.at.summary.burst && !r.at.summary.unstable;
  };
  for (int again = 0; again < 2 && opt.longer && a_burst(*res); ++again) {
    const int64_t n = SteadyStreamLength(res->at.summary, opt.max_requests);
    if (n <= res->requests) break;
    StatusOr<std::vector<RequestSpec>> more = opt.longer(n);
    if (!more.ok()) return more.status();
    StatusOr<MaxRateResult> next = MaxRateOn(sim, ToUnitRate(*more), slos, res->rate_rps, opt);
    if (!next.ok()) return next.status();
    next->probes.insert(next->probes.begin(), res->probes.begin(), res->probes.end());
    next->requests = static_cast<int64_t>(more->size());
    next->burst_rate_rps = res->burst_rate_rps > 0 ? res->burst_rate_rps : res->rate_rps;
    next->burst_requests = res->burst_requests > 0 ? res->burst_requests : res->requests;
    *res = std::move(*next);
  }
  res->burst = a_burst(*res);
  return Status::Ok();
}

StatusOr<MaxRateResult> MaxRate(ServeSim* sim, const std::vector<RequestSpec>& unit,
                                const std::vector<Slo>& slos, double hint_rps,
                                const MaxRateOptions& opt) {
  StatusOr<MaxRateResult> res = MaxRateOn(sim, unit, slos, hint_rps, opt);
  if (!res.ok()) return res;
  res->requests = static_cast<int64_t>(unit.size());
  if (Status st = SearchPastBurst(sim, slos, opt, &*res); !st.ok()) return st;
  return res;
}

StatusOr<MaxClientsResult> MaxClients(ServeSim* sim, const std::vector<RequestSpec>& requests,
                                      int concurrency, const std::vector<Slo>& slos) {
  if (concurrency < 1) return Status::InvalidArgument("max clients: needs at least one client");
  if (requests.empty()) return Status::InvalidArgument("max clients: no request");
  MaxClientsResult res;
  const double per_client =
      static_cast<double>(requests.size()) / static_cast<double>(concurrency);
  auto probe = [&](int c) {
    const size_t m = std::min(
        requests.size(),
        static_cast<size_t>(std::max(1.0, std::ceil(per_client * c - 1e-9))));
    const std::vector<RequestSpec> part(requests.begin(),
                                        requests.begin() + static_cast<std::ptrdiff_t>(m));
    ClientsProbe p;
    p.clients = c;
    p.summary = Summarise(sim->Run(part, c), slos);
    p.meets = MeetsSlos(p.summary, slos, &p.why);
    res.probes.push_back(p);
    return p.meets;
  };
  // Every client: the answer; else one client, then bisection between the two.
  if (probe(concurrency)) {
    res.found = true;
    res.clients = concurrency;
    res.at = res.probes.back();
    return res;
  }
  res.fail_clients = concurrency;
  if (concurrency == 1 || !probe(1)) {
    res.fail_clients = 1;
    return res;
  }
  int lo = 1, hi = concurrency;
  size_t at = res.probes.size() - 1;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (probe(mid)) {
      lo = mid;
      at = res.probes.size() - 1;
    } else {
      hi = mid;
    }
  }
  res.found = true;
  res.clients = lo;
  res.fail_clients = hi;
  res.at = res.probes[at];
  return res;
}

double ClosedLoopRateGuess(int concurrency, int64_t osl, const std::vector<Slo>& slos) {
  double e2e_ms = 0, ttft_ms = 0, tpot_ms = 0;  // the tightest limits (0: none)
  auto tighten = [](double* x, double v) {
    if (*x == 0 || v < *x) *x = v;
  };
  for (const Slo& o : slos) {
    if (o.metric == Metric::kE2e) tighten(&e2e_ms, o.limit_ms);
    else if (o.metric == Metric::kTtft) tighten(&ttft_ms, o.limit_ms);
    else tighten(&tpot_ms, o.limit_ms);  // TPOT or inter-token
  }
  const double e_ms = e2e_ms > 0 ? e2e_ms
                      : tpot_ms > 0
                          ? ttft_ms + static_cast<double>(std::max<int64_t>(0, osl - 1)) * tpot_ms
                          : 0;
  return e_ms > 0 && concurrency > 0 ? concurrency / (e_ms / 1e3) : 0;
}

namespace {

// Whether candidate i on `gpus` GPUs is the nearer deployment below the answer than candidate j
// on `gpus_j`: more GPUs; ties: the answer's own layout, then more requests/s per GPU.
bool NearerBelow(const CapacityResult& r, int i, int gpus, int j, int gpus_j) {
  if (gpus != gpus_j) return gpus > gpus_j;
  if (j == r.best) return false;
  if (i == r.best) return true;
  const SizeResult& a = r.candidates[i];
  const SizeResult& b = r.candidates[j];
  return a.instance_max_rps / a.layout.strategy.gpus() > b.instance_max_rps / b.layout.strategy.gpus();
}

}  // namespace

StatusOr<CapacityResult> FewestGpus(const std::vector<LayoutOption>& layouts,
                                    const std::vector<RequestSpec>& requests,
                                    const std::vector<Slo>& slos, const CapacityOptions& opt) {
  if (layouts.empty()) return Status::InvalidArgument("capacity: no candidate layout");
  const bool closed = opt.concurrency > 0;
  const double stream_rate = StreamRate(requests);
  if (!closed && stream_rate <= 0)
    return Status::InvalidArgument("capacity: the request stream needs arrivals spread in time");
  if (closed && requests.empty()) return Status::InvalidArgument("capacity: no request");
  const std::vector<RequestSpec> unit = closed ? std::vector<RequestSpec>() : ToUnitRate(requests);
  int64_t isl = 0, osl = 0;
  MeanLengths(requests, &isl, &osl);
  CapacityResult out;
  // Per candidate: its step cost (null when it cannot serve at all), kept with its memo for the
  // size below the answer, and one instance's max rate (or why there is none). Each candidate's
  // own work, so all of them at once; the instance counts below depend on earlier candidates.
  struct OneInstance {
    std::string note;                   // why the layout cannot serve ("" when it can)
    std::optional<StatusOr<MaxRateResult>> mr;
    std::optional<StatusOr<MaxClientsResult>> mc;  // closed loop
  };
  std::vector<std::unique_ptr<StepCost>> costs(layouts.size());
  std::vector<OneInstance> first(layouts.size());
  ParallelFor(static_cast<int>(layouts.size()), opt.jobs, [&](int i) {
    const LayoutOption& lay = layouts[static_cast<size_t>(i)];
    OneInstance& f = first[static_cast<size_t>(i)];
    auto made = StepCost::Make(lay.problem, lay.strategy);
    if (!made.ok()) {
      f.note = made.status().message();
      return;
    }
    costs[static_cast<size_t>(i)] = std::move(*made);
    StepCost* cost = costs[static_cast<size_t>(i)].get();
    ServeOptions so = WithTtftStops(opt.serve, slos);
    so.instances = 1;
    auto one = ServeSim::Make(cost, so, isl, osl);
    if (!one.ok()) {
      f.note = one.status().message();
      return;
    }
    if (closed) {
      f.mc = MaxClients(one->get(), requests, opt.concurrency, slos);
      return;
    }
    // On the stream as given; a burst answer is searched again below, only where the layout
    // could be the answer (a longer stream at a high rate is most of a sizing's work).
    MaxRateOptions given = opt.rate;
    given.longer = nullptr;
    f.mr = MaxRate(one->get(), unit, slos, SteadyStateRps(*cost, isl, osl), given);
  });
  for (size_t li = 0; li < layouts.size(); ++li) {
    const LayoutOption& lay = layouts[li];
    SizeResult sr;
    sr.layout = lay;
    const int g = lay.strategy.gpus();
    StepCost* cost = costs[li].get();
    if (!first[li].mr && !first[li].mc) {
      sr.note = first[li].note;
      out.candidates.push_back(sr);
      continue;
    }
    // No more instances than the limit, nor more GPUs than the best candidate so far (a tie
    // may still win on rate): a layout needing more cannot be the answer.
    int max_inst = std::max(1, opt.max_gpus / g);
    int bound_gpus = 0;
    for (const SizeResult& c : out.candidates)
      if (c.meets && (bound_gpus == 0 || c.gpus < bound_gpus)) bound_gpus = c.gpus;
    int n = 1;  // the first guess of the instances
    bool pruned = false;
    if (closed) {
      StatusOr<MaxClientsResult>& mc = *first[li].mc;
      if (!mc.ok()) return mc.status();
      if (!mc->found) {
        sr.note = mc->probes.empty()
                      ? std::string("no client count meets the SLOs")
                      : "not even one client meets the SLOs on one instance (" +
                            mc->probes.back().why + ")";
        out.candidates.push_back(sr);
        continue;
      }
      sr.instance_max_clients = mc->clients;
      sr.instance_max_rps = mc->at.summary.request_rate;
      pruned = bound_gpus > 0 && bound_gpus / g < max_inst;
      if (pruned) max_inst = std::max(1, bound_gpus / g);
      n = std::clamp((opt.concurrency + mc->clients - 1) / mc->clients, 1, max_inst);
    } else {
      StatusOr<MaxRateResult>& mr = *first[li].mr;
      if (!mr.ok()) return mr.status();
      // Why a layout whose max-rate search found no rate gives no answer.
      auto no_rate = [](const MaxRateResult& m) {
        return m.probes.empty() ? std::string("no rate meets the SLOs")
                                : "no rate meets the SLOs on one instance (" + m.probes.back().why +
                                      ")";
      };
      if (!mr->found) {
        sr.note = no_rate(*mr);
        out.candidates.push_back(sr);
        continue;
      }
      // A burst answer (the stream too short for that rate) searched again on a longer stream
      // where the layout could still be the answer (at most the fewest GPUs found so far).
      if (mr->burst && opt.rate.longer && (bound_gpus == 0 || g <= bound_gpus)) {
        ServeOptions so = WithTtftStops(opt.serve, slos);
        so.instances = 1;
        auto one = ServeSim::Make(cost, so, isl, osl);
        if (!one.ok()) return one.status();
        if (Status st = SearchPastBurst(one->get(), slos, opt.rate, &*mr); !st.ok()) return st;
        if (!mr->found) {
          sr.note = no_rate(*mr);
          out.candidates.push_back(sr);
          continue;
        }
      }
      sr.instance_max_rps = mr->rate_rps;
      sr.instance_max_rate_burst = mr->burst;
      pruned = bound_gpus > 0 && bound_gpus / g < max_inst;
      if (pruned) max_inst = std::max(1, bound_gpus / g);
      n = std::clamp(static_cast<int>(std::ceil(stream_rate / mr->rate_rps - 1e-9)), 1, max_inst);
    }
    // Simulates the whole stream on k instances (one step-cost memo shared through `cost`);
    // each count is simulated once: the search below revisits the count under the fewest that
    // meet (the bisection's last miss) when it reports one instance fewer.
    struct CountRun {
      bool meets = false;
      ServeSummary summary;
      std::string why;
    };
    std::map<int, CountRun> runs;
    auto simulate = [&](int k, ServeSummary* s, std::string* why) {
      auto [it, fresh] = runs.try_emplace(k);
      CountRun& r = it->second;
      if (fresh) {
        ++sr.simulations;
        ServeOptions sk = WithTtftStops(opt.serve, slos);
        sk.instances = k;
        auto sim = ServeSim::Make(cost, sk, isl, osl);
        if (!sim.ok()) {
          r.why = sim.status().message();
        } else {
          r.summary = Summarise((*sim)->Run(requests, opt.concurrency), slos);
          r.meets = MeetsSlos(r.summary, slos, &r.why);
        }
      }
      *s = r.summary;
      *why = r.why;
      return r.meets;
    };
    std::string why;
    bool ok = simulate(n, &sr.at, &why);
    // The fewest instances that meet lie between a count that misses (`lo`; 0 until one is known)
    // and one that meets (`n`). The first guess can be far from them either way - below, and
    // above where one instance alone queues what a pool of them behind the router absorbs (a
    // 1-GPU Llama-70B at 20 req/s: 579 guessed, 178 the answer) - and every count is a whole-
    // stream simulation, so the other end is found in doubling steps (up when the guess misses,
    // down when it meets) and the two bisected to the count whose one fewer misses.
    int lo = 0;
    if (!ok) {
      for (int step = 1; !ok && n < max_inst; step *= 2) {
        lo = n;
        n = std::min(max_inst, n + step);
        ok = simulate(n, &sr.at, &why);
      }
      if (!ok) {
        sr.missed_instances = n;
        sr.missed_why = why;
        const char* inst = n == 1 ? "instance" : "instances";
        sr.note = pruned ? fmt::format(
                               "{} {} ({} GPUs) still miss: {}; more would exceed the {} "
                               "GPUs of a layout above",
                               n, inst, n * g, why, bound_gpus)
                         : fmt::format("{} {} ({} GPUs, the limit) still miss: {}", n, inst,
                                       n * g, why);
        out.candidates.push_back(sr);
        continue;
      }
    } else {
      for (int step = 1; n > 1 && lo == 0; step *= 2) {
        const int k = std::max(1, n - step);
        ServeSummary s;
        std::string w;
        if (simulate(k, &s, &w)) n = k;
        else lo = k;
      }
    }
    while (lo > 0 && n - lo > 1) {
      const int mid = lo + (n - lo) / 2;
      ServeSummary s;
      std::string w;
      if (simulate(mid, &s, &w)) n = mid;
      else lo = mid;
    }
    simulate(n, &sr.at, &why);  // each count's run is kept: no new simulation
    if (n > 1) {
      sr.has_smaller = true;
      simulate(n - 1, &sr.smaller, &sr.smaller_why);
    }
    sr.meets = true;
    sr.instances = n;
    sr.gpus = n * g;
    out.candidates.push_back(sr);
  }
  for (size_t i = 0; i < out.candidates.size(); ++i) {
    const SizeResult& c = out.candidates[i];
    if (!c.meets) continue;
    if (out.best < 0) {
      out.best = static_cast<int>(i);
      continue;
    }
    const SizeResult& b = out.candidates[out.best];
    if (c.gpus < b.gpus ||
        (c.gpus == b.gpus && c.instance_max_rps / c.layout.strategy.gpus() >
                                 b.instance_max_rps / b.layout.strategy.gpus()))
      out.best = static_cast<int>(i);
  }
  out.found = out.best >= 0;
  if (!out.found) return out;
  // One size smaller: the most GPUs below the answer that whole instances of a layout make.
  const SizeResult& best = out.candidates[out.best];
  int target = -1, target_k = 0, target_gpus = 0;
  for (int i = 0; i < static_cast<int>(out.candidates.size()); ++i) {
    if (costs[i] == nullptr) continue;
    const SizeResult& c = out.candidates[i];
    const int g = c.layout.strategy.gpus();
    const int k = (best.gpus - 1) / g;
    if (k < 1) continue;
    if (target < 0 || NearerBelow(out, i, k * g, target, target_gpus)) {
      target = i;
      target_k = k;
      target_gpus = k * g;
    }
  }
  const std::optional<SmallerDeployment> simulated = OneSizeSmaller(out);
  if (target >= 0 && (!simulated || simulated->gpus < target_gpus)) {
    ServeOptions sk = WithTtftStops(opt.serve, slos);
    sk.instances = target_k;
    auto sim = ServeSim::Make(costs[target].get(), sk, isl, osl);
    if (sim.ok()) {
      SmallerDeployment d{target, target_k, target_gpus,
                          Summarise((*sim)->Run(requests, opt.concurrency), slos), ""};
      if (!MeetsSlos(d.summary, slos, &d.why)) out.below.push_back(std::move(d));
    }
  }
  return out;
}

std::optional<SmallerDeployment> OneSizeSmaller(const CapacityResult& r) {
  if (!r.found) return std::nullopt;
  const SizeResult& best = r.candidates[r.best];
  std::optional<SmallerDeployment> out;
  auto consider = [&](int i, int instances, const ServeSummary& s, const std::string& why) {
    const SizeResult& c = r.candidates[i];
    const int gpus = instances * c.layout.strategy.gpus();
    if (instances < 1 || gpus >= best.gpus) return;
    if (out && !NearerBelow(r, i, gpus, out->candidate, out->gpus)) return;
    out = SmallerDeployment{i, instances, gpus, s, why};
  };
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
    const SizeResult& c = r.candidates[i];
    if (c.has_smaller) consider(i, c.instances - 1, c.smaller, c.smaller_why);
    if (!c.meets && c.missed_instances > 0) consider(i, c.missed_instances, c.at, c.missed_why);
  }
  for (const SmallerDeployment& d : r.below) consider(d.candidate, d.instances, d.summary, d.why);
  return out;
}

namespace {

// The pools a missed SLO or an unstable run blames: bit 0 prefill, bit 1 decode. An unstable run
// blames the pool whose queue held more requests when the last one arrived (ServeRun::
// prefill_queued / decode_queued: where the overload builds up), and when neither queued (a
// decode batch that admits everything grows instead) every pool at least 95% busy (the busier
// when none is). A busy share alone does not single a pool out: a decode instance steps whenever
// it holds a request, and a pipelined prefill instance steps while some of its stages idle (a
// prefill pool with 8 stages, its queue growing, measured 45% busy and was never grown). A missed TTFT
// blames the prefill pool, and the decode pool instead when the requests waited for its KV
// allocation for at least half their mean TTFT (its back-pressure, not the prefill, is late).
int Blame(const ServeSummary& s, const std::vector<Slo>& slos) {
  const int busier = s.prefill_busy >= s.decode_busy ? 1 : 2;
  if (s.unstable) {
    if (s.prefill_queued != s.decode_queued) return s.prefill_queued > s.decode_queued ? 1 : 2;
    const int m = (s.prefill_busy >= 0.95 ? 1 : 0) | (s.decode_busy >= 0.95 ? 2 : 0);
    return m != 0 ? m : busier;
  }
  for (const Slo& o : slos) {
    if (Figure(s, o.metric, o.stat) * 1e3 <= o.limit_ms) continue;
    if (o.metric == Metric::kTtft)
      return s.decode_alloc_wait.mean >= 0.5 * s.ttft.mean ? 2 : 1;
    if (o.metric == Metric::kTpot || o.metric == Metric::kItl) return 2;
    return busier;
  }
  return busier;
}

// A TTFT percentile the stream misses on idle instances, at every pool size: the requests with
// the most prompt tokens to prefill are simulated one at a time on `sim` (no queue, nothing else
// running; `sim` without TTFT early stops) and every other request counted at 0 ms - a lower
// bound of each request's TTFT under any load, so a percentile of them above its limit is above
// it at any size (instances only shorten queues). Only the requests a percentile reads are
// simulated: the n - floor(q (n - 1)) largest values (Quantile interpolates between two). "" when
// no TTFT percentile is missed or more than 64 requests would be needed.
std::string IdleTtftMiss(ServeSim* sim, const std::vector<RequestSpec>& requests,
                         const std::vector<Slo>& slos) {
  const size_t n = requests.size();
  double q = 1;
  for (const Slo& o : slos)
    if (o.metric == Metric::kTtft && StatQuantile(o.stat) > 0)
      q = std::min(q, StatQuantile(o.stat));
  if (n == 0 || q >= 1) return "";
  const size_t k = n - static_cast<size_t>(std::floor(q * static_cast<double>(n - 1)));
  if (k > 64) return "";
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  auto work = [&](size_t i) { return requests[i].prompt - requests[i].cached; };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](size_t a, size_t b) { return work(a) != work(b) ? work(a) > work(b) : a < b; });
  std::vector<double> ttft(n, 0.0);
  for (size_t j = 0; j < k; ++j) {
    RequestSpec r = requests[idx[j]];
    r.arrival_s = 0;
    r.output = 1;  // the first token is all a TTFT waits for
    const ServeSummary one = Summarise(sim->Run({r}), {});
    if (one.completed != 1) return "";
    ttft[idx[j]] = one.ttft.mean;
  }
  for (const Slo& o : slos) {
    const double sq = StatQuantile(o.stat);
    if (o.metric != Metric::kTtft || sq <= 0) continue;
    const double ms = Quantile(ttft, sq) * 1e3;
    if (ms > o.limit_ms)
      return fmt::format(
          "{} ttft {:.1f} ms > {} ms with every request alone on idle instances (the longest "
          "prompts' own prefill): no pool size meets it",
          StatName(o.stat), ms, o.limit_ms);
  }
  return "";
}

}  // namespace

StatusOr<std::unique_ptr<ServeSim>> MakeSizedDisagg(const DisaggLayoutOption& lay,
                                                    const StepCost* prefill,
                                                    const StepCost* decode, ServeOptions so,
                                                    int np, int nd, int64_t isl, int64_t osl) {
  so.instances = nd;
  DisaggServeOptions d;
  d.prefill_instances = np;
  d.prefill_router = so.router;  // one front end routes to both pools
  d.link = lay.link;
  d.layerwise = lay.layerwise;
  return ServeSim::MakeDisagg(prefill, decode, so, d, isl, osl);
}

StatusOr<DisaggCapacityResult> FewestGpusDisagg(const std::vector<DisaggLayoutOption>& layouts,
                                                const std::vector<RequestSpec>& requests,
                                                const std::vector<Slo>& slos,
                                                const CapacityOptions& opt) {
  if (layouts.empty()) return Status::InvalidArgument("capacity: no candidate layout");
  const bool closed = opt.concurrency > 0;
  if (closed && requests.empty()) return Status::InvalidArgument("capacity: no request");
  int64_t isl = 0, osl = 0;
  MeanLengths(requests, &isl, &osl);
  // Closed loop: the rate the clients are served at when the SLOs hold, guessed from them.
  const double stream_rate =
      closed ? ClosedLoopRateGuess(opt.concurrency, osl, slos) : StreamRate(requests);
  if (!closed && stream_rate <= 0)
    return Status::InvalidArgument("capacity: the request stream needs arrivals spread in time");
  DisaggCapacityResult out;
  for (const DisaggLayoutOption& lay : layouts) {
    DisaggSizeResult sr;
    sr.layout = lay;
    const int gp = lay.prefill.gpus(), gd = lay.decode.gpus();
    auto pc = StepCost::Make(lay.prefill_problem, lay.prefill);
    auto dc = StepCost::Make(lay.decode_problem, lay.decode);
    if (!pc.ok() || !dc.ok()) {
      sr.note = !pc.ok() ? "prefill: " + pc.status().message()
                         : "decode: " + dc.status().message();
      out.candidates.push_back(sr);
      continue;
    }
    // Simulates the stream on (np, nd) (the costs' memos are shared between the runs).
    auto make = [&](int np, int nd) {
      return MakeSizedDisagg(lay, pc->get(), dc->get(), WithTtftStops(opt.serve, slos), np, nd,
                             isl, osl);
    };
    std::string make_error;
    auto simulate = [&](int np, int nd, ServeSummary* s, std::string* why) {
      auto sim = make(np, nd);
      ++sr.simulations;
      if (!sim.ok()) {
        make_error = *why = sim.status().message();
        return false;
      }
      *s = Summarise((*sim)->Run(requests, opt.concurrency), slos);
      return MeetsSlos(*s, slos, why);
    };
    // No more GPUs than the limit, nor than an answer already found (the caller's, or a pair
    // above that meets): a pair needing more cannot be the answer.
    int bound_gpus = opt.bound_gpus;
    const char* bound_of = "the aggregated answer";
    for (const DisaggSizeResult& c : out.candidates)
      if (c.meets && (bound_gpus <= 0 || c.gpus < bound_gpus)) {
        bound_gpus = c.gpus;
        bound_of = "a pair above";
      }
    const int cap = bound_gpus > 0 ? std::min(opt.max_gpus, bound_gpus) : opt.max_gpus;
    auto fits = [&](int np, int nd) { return np >= 1 && nd >= 1 && np * gp + nd * gd <= cap; };
    if (!fits(1, 1)) {
      sr.note = cap < opt.max_gpus
                    ? fmt::format("one prefill and one decode instance need {} GPUs, more than "
                                  "the {} GPUs of {}",
                                  gp + gd, cap, bound_of)
                    : fmt::format("one prefill and one decode instance need {} GPUs (--max-gpus {})",
                                  gp + gd, opt.max_gpus);
      out.candidates.push_back(sr);
      continue;
    }
    // Requests that a rank of either pool cannot hold are refused at every pool size (the
    // ranks' KV does not depend on the instance counts): no sizing.
    if (auto one = make(1, 1); !one.ok() || (*one)->Refused(requests, &sr.note) > 0) {
      if (!one.ok()) sr.note = one.status().message();
      else sr.note += ", at every pool size";
      out.candidates.push_back(sr);
      continue;
    }
    // A TTFT percentile missed with every request alone: no pool size meets it (growing the
    // pools one instance at a time up to the limit took a thousand simulations to say so).
    auto alone = MakeSizedDisagg(lay, pc->get(), dc->get(), opt.serve, 1, 1, isl, osl);
    if (std::string idle = alone.ok() ? IdleTtftMiss(alone->get(), requests, slos) : "";
        !idle.empty()) {
      sr.note = idle;
      out.candidates.push_back(sr);
      continue;
    }
    // First guess: the stream's rate over each role's steady-state rate per instance, else each
    // pool's stepping seconds per request on 1P1D x the stream's rate.
    ServeSummary s;
    std::string why;
    int np = 1, nd = 1;
    const bool hinted = lay.prefill_rps_hint > 0 && lay.decode_rps_hint > 0;
    if (hinted) {
      np = std::max(1, static_cast<int>(std::ceil(stream_rate / lay.prefill_rps_hint - 1e-9)));
      nd = std::max(1, static_cast<int>(std::ceil(stream_rate / lay.decode_rps_hint - 1e-9)));
      while (!fits(np, nd) && (np > 1 || nd > 1)) {
        if (np >= nd && np > 1) --np;
        else --nd;
      }
    }
    bool ok = simulate(np, nd, &s, &why);
    if (!make_error.empty()) {
      sr.note = make_error;
      out.candidates.push_back(sr);
      continue;
    }
    if (!hinted && !ok && s.makespan_s > 0 && s.completed > 0) {
      const double per_req_p = s.prefill_busy * s.makespan_s / static_cast<double>(s.completed);
      const double per_req_d = s.decode_busy * s.makespan_s / static_cast<double>(s.completed);
      np = std::max(1, static_cast<int>(std::ceil(stream_rate * per_req_p - 1e-9)));
      nd = std::max(1, static_cast<int>(std::ceil(stream_rate * per_req_d - 1e-9)));
      while (!fits(np, nd) && (np > 1 || nd > 1)) {
        if (np >= nd && np > 1) --np;
        else --nd;
      }
      if (np != 1 || nd != 1) ok = simulate(np, nd, &s, &why);
    }
    // Grow the blamed pool until the SLOs hold.
    while (!ok) {
      const int m = Blame(s, slos);
      int np2 = np + (m & 1), nd2 = nd + (m >> 1 & 1);
      if (!fits(np2, nd2)) {  // the limit: grow what still fits
        if (fits(np + 1, nd)) np2 = np + 1, nd2 = nd;
        else if (fits(np, nd + 1)) np2 = np, nd2 = nd + 1;
        else break;
      }
      np = np2;
      nd = nd2;
      ok = simulate(np, nd, &s, &why);
    }
    if (!ok) {
      sr.note = cap < opt.max_gpus
                    ? fmt::format("{} prefill + {} decode instances ({} GPUs) still miss: {}; more "
                                  "would exceed the {} GPUs of {}",
                                  np, nd, np * gp + nd * gd, why, cap, bound_of)
                    : fmt::format("{} prefill + {} decode instances ({} GPUs, the limit) still "
                                  "miss: {}",
                                  np, nd, np * gp + nd * gd, why);
      out.candidates.push_back(sr);
      continue;
    }
    sr.at = s;
    // Shrink: drop an instance of either pool (the larger GPU count first) while the SLOs hold.
    while (true) {
      bool shrunk = false;
      const int order[2] = {gp >= gd ? 0 : 1, gp >= gd ? 1 : 0};
      sr.has_fewer_prefill = sr.has_fewer_decode = false;
      for (int k : order) {
        const int np2 = np - (k == 0), nd2 = nd - (k == 1);
        if (np2 < 1 || nd2 < 1) continue;
        ServeSummary t;
        std::string w;
        if (simulate(np2, nd2, &t, &w)) {
          np = np2;
          nd = nd2;
          sr.at = t;
          shrunk = true;
          break;
        }
        if (k == 0) {
          sr.has_fewer_prefill = true;
          sr.fewer_prefill = t;
          sr.fewer_prefill_why = w;
        } else {
          sr.has_fewer_decode = true;
          sr.fewer_decode = t;
          sr.fewer_decode_why = w;
        }
      }
      if (!shrunk) break;
    }
    sr.meets = true;
    sr.prefill_instances = np;
    sr.decode_instances = nd;
    sr.gpus = np * gp + nd * gd;
    out.candidates.push_back(sr);
  }
  for (size_t i = 0; i < out.candidates.size(); ++i) {
    const DisaggSizeResult& c = out.candidates[i];
    if (!c.meets) continue;
    if (out.best < 0) {
      out.best = static_cast<int>(i);
      continue;
    }
    const DisaggSizeResult& b = out.candidates[out.best];
    if (c.gpus < b.gpus || (c.gpus == b.gpus && c.at.goodput_rps > b.at.goodput_rps))
      out.best = static_cast<int>(i);
  }
  out.found = out.best >= 0;
  return out;
}

}  // namespace l2s::serve
