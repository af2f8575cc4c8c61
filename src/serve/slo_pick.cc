#include "serve/slo_pick.h"

#include <algorithm>
#include <map>

#include "serve/step_cost.h"

namespace l2s::serve {

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
  auto add = [&](Strategy s, const Evaluation& e, size_t order) {
    if (!e.valid() || e.batch < 1) return;
    s.batch = e.batch;
    if (!seen.emplace(ToText(s), true).second) return;
    cands.push_back({s, e, order});
  };
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i].second.valid()) continue;
    add(given[i].first, given[i].second, i);
    int b = given[i].second.batch;
    for (int h = 0; h < opt.halvings && b > 1; ++h) {
      b /= 2;
      add(given[i].first, sim.EvaluateAtBatch(given[i].first, b), i);
    }
  }
  if (cands.empty()) return Status::Invalid("no valid candidate deployment to simulate");
  std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.e.tokens_per_s_per_gpu != b.e.tokens_per_s_per_gpu)
      return a.e.tokens_per_s_per_gpu > b.e.tokens_per_s_per_gpu;
    if (a.order != b.order) return a.order < b.order;
    return a.e.batch > b.e.batch;
  });
  SloPick out;
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
    if (!ss.ok()) return ss.status();
    const ServeRun run = (*ss)->Run(requests, concurrency);
    SloCandidate r;
    r.strategy = c.s;
    r.steady = c.e;
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
