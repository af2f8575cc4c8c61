#include "serve/capacity.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace l2s::serve {
namespace {

std::vector<RequestSpec> AtRate(const std::vector<RequestSpec>& unit, double rate) {
  std::vector<RequestSpec> out = unit;
  for (RequestSpec& r : out) r.arrival_s = unit.empty() ? 0 : r.arrival_s / rate;
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

StatusOr<MaxRateResult> MaxRate(ServeSim* sim, const std::vector<RequestSpec>& unit,
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
  // Bracket: a passing rate below, a failing one above.
  double hi = 2 * hint_rps;
  RateProbe ph = probe(hi);
  while (ph.meets && probes < opt.max_probes) {
    res.found = true;
    res.rate_rps = hi;
    res.at = ph;
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

StatusOr<CapacityResult> FewestGpus(const std::vector<LayoutOption>& layouts,
                                    const std::vector<RequestSpec>& requests,
                                    const std::vector<Slo>& slos, const CapacityOptions& opt) {
  if (layouts.empty()) return Status::InvalidArgument("capacity: no candidate layout");
  const double stream_rate = StreamRate(requests);
  if (stream_rate <= 0)
    return Status::InvalidArgument("capacity: the request stream needs arrivals spread in time");
  const std::vector<RequestSpec> unit = ToUnitRate(requests);
  int64_t isl = 0, osl = 0;
  for (const RequestSpec& r : requests) {
    isl += r.prompt;
    osl += r.output;
  }
  isl = std::max<int64_t>(1, isl / static_cast<int64_t>(requests.size()));
  osl = std::max<int64_t>(1, osl / static_cast<int64_t>(requests.size()));
  CapacityResult out;
  for (const LayoutOption& lay : layouts) {
    SizeResult sr;
    sr.layout = lay;
    const int g = lay.strategy.gpus();
    auto cost = StepCost::Make(lay.problem, lay.strategy);
    if (!cost.ok()) {
      sr.note = cost.status().message();
      out.candidates.push_back(sr);
      continue;
    }
    ServeOptions so = opt.serve;
    so.instances = 1;
    auto one = ServeSim::Make(cost->get(), so, isl, osl);
    if (!one.ok()) {
      sr.note = one.status().message();
      out.candidates.push_back(sr);
      continue;
    }
    auto mr = MaxRate(one->get(), unit, slos, SteadyStateRps(**cost, isl, osl), opt.rate);
    if (!mr.ok()) return mr.status();
    if (!mr->found) {
      sr.note = mr->probes.empty() ? "no rate meets the SLOs"
                                   : "no rate meets the SLOs on one instance (" +
                                         mr->probes.back().why + ")";
      out.candidates.push_back(sr);
      continue;
    }
    sr.instance_max_rps = mr->rate_rps;
    const int max_inst = std::max(1, opt.max_gpus / g);
    int n = std::clamp(static_cast<int>(std::ceil(stream_rate / mr->rate_rps - 1e-9)), 1, max_inst);
    // Simulates the whole stream on k instances (one memo shared through `cost`).
    auto simulate = [&](int k, ServeSummary* s, std::string* why) {
      ServeOptions sk = opt.serve;
      sk.instances = k;
      auto sim = ServeSim::Make(cost->get(), sk, isl, osl);
      if (!sim.ok()) {
        *why = sim.status().message();
        return false;
      }
      *s = Summarise((*sim)->Run(requests), slos);
      return MeetsSlos(*s, slos, why);
    };
    std::string why;
    bool ok = simulate(n, &sr.at, &why);
    while (!ok && n < max_inst) {
      ++n;
      ok = simulate(n, &sr.at, &why);
    }
    if (!ok) {
      sr.note = fmt::format("{} instances ({} GPUs, the limit) still miss: {}", n, n * g, why);
      out.candidates.push_back(sr);
      continue;
    }
    // One fewer instance: keep going down while it still meets the SLOs.
    while (n > 1) {
      ServeSummary s;
      std::string w;
      if (simulate(n - 1, &s, &w)) {
        --n;
        sr.at = s;
        continue;
      }
      sr.has_smaller = true;
      sr.smaller = s;
      sr.smaller_why = w;
      break;
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
  return out;
}

}  // namespace l2s::serve
