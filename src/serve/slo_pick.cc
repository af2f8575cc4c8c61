#include "serve/slo_pick.h"

#include <algorithm>
#include <limits>
#include <map>

#include "serve/step_cost.h"

namespace l2s::serve {

double TpotBoundS(const std::vector<Slo>& slos) {
  const double ms = SteadyLimitsOf(slos).tpot_ms;
  return ms > 0 ? ms * 1e-3 : std::numeric_limits<double>::infinity();
}

int LargestBatchWithin(int hi, double bound_s, const std::function<double(int)>& tpot_s_at) {
  if (hi < 1 || !(tpot_s_at(1) <= bound_s)) return 0;
  int lo = 1;  // tpot_s_at(lo) <= bound_s
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (tpot_s_at(mid) <= bound_s) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

StatusOr<SloPick> PickBySlos(const Simulator& sim,
                             const std::vector<std::pair<Strategy, Evaluation>>& given,
                             const std::vector<RequestSpec>& requests, int concurrency,
                             const std::vector<Slo>& slos, const SloPickOptions& opt) {
  if (slos.empty()) return Status::InvalidArgument("PickBySlos: no SLO");
  if (requests.empty()) return Status::InvalidArgument("PickBySlos: no request");
  struct Cand {
    Strategy s;
    Evaluation e;
    size_t order;
  };
  std::vector<Cand> cands;
  std::map<std::string, bool> seen;
  const double bound_s = TpotBoundS(slos);
  auto add = [&](Strategy s, const Evaluation& e, size_t order) {
    if (!e.valid() || e.batch < 1 || e.tpot_s > bound_s) return;
    s.batch = e.batch;
    if (!seen.emplace(ToText(s), true).second) return;
    cands.push_back({s, e, order});
  };
  SloPick out;
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i].second.valid() || given[i].second.batch < 1) continue;
    const Strategy& s = given[i].first;
    Evaluation e = given[i].second;
    if (e.tpot_s > bound_s) {
      // The largest running limit whose steady state meets the TPOT SLO.
      const int b = LargestBatchWithin(e.batch - 1, bound_s, [&](int batch) {
        const Evaluation at = sim.EvaluateAtBatch(s, batch);
        return at.valid() ? at.tpot_s : std::numeric_limits<double>::infinity();
      });
      if (b == 0) {
        ++out.left_out;
        continue;
      }
      ++out.lowered;
      e = sim.EvaluateAtBatch(s, b);
    }
    add(s, e, i);
    int b = e.batch;
    for (int h = 0; h < opt.halvings && b > 1; ++h) {
      b /= 2;
      add(s, sim.EvaluateAtBatch(s, b), i);
    }
  }
  // Every candidate over the TPOT SLO at batch 1: nothing to simulate, none found.
  if (cands.empty() && out.left_out > 0) return out;
  if (cands.empty()) return Status::Invalid("no valid candidate deployment to simulate");
  std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.e.tokens_per_s_per_gpu != b.e.tokens_per_s_per_gpu)
      return a.e.tokens_per_s_per_gpu > b.e.tokens_per_s_per_gpu;
    if (a.order != b.order) return a.order < b.order;
    return a.e.batch > b.e.batch;
  });
  out.candidates = static_cast<int64_t>(cands.size());
  const Problem& p = sim.problem();
  for (const Cand& c : cands) {
    if (static_cast<int>(out.simulated.size()) >= opt.max_simulations) break;
    Strategy s = c.s;
    s.batch = 0;  // the scheduler sets the running batch (max_running below)
    auto cost = StepCost::Make(p, s);
    if (!cost.ok()) continue;  // e.g. a layout the step cost cannot price
    ServeOptions o = opt.serve;
    o.max_running = c.e.batch;
    auto ss = ServeSim::Make(cost->get(), o, p.workload.isl, p.workload.osl);
    SloCandidate r;
    r.strategy = c.s;
    r.steady = c.e;
    if (!ss.ok()) {
      // A layout the request-level simulator cannot run (e.g. no KV cache beside the activations
      // of the engine's full token budget, which the steady state at its batch does not hold):
      // a candidate that misses, the next one is tried.
      r.summary.unstable = true;
      r.why = r.summary.unstable_reason = ss.status().message();
      out.simulated.push_back(std::move(r));
      continue;
    }
    const ServeRun run = (*ss)->Run(requests, concurrency);
    r.summary = Summarise(run, slos);
    r.meets = MeetsSlos(r.summary, slos, &r.why);
    out.simulated.push_back(std::move(r));
    if (out.simulated.back().meets) {
      out.found = true;
      out.best = static_cast<int>(out.simulated.size()) - 1;
      break;
    }
  }
  return out;
}

}  // namespace l2s::serve
