#include "plan/engines.h"

#include <fmt/core.h>

#include <memory>
#include <utility>

#include "engine/restrict.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "search/refine.h"
#include "search/work_bound.h"

namespace l2s::plan {

StatusOr<EnginePlan> PlanForEngine(const Problem& p, engine::EngineId id, const AggRequest& req,
                                   int mtp, const PlanProgress& progress) {
  const engine::Capabilities& caps = engine::CapabilitiesOf(id);
  EnginePlan out;
  out.id = id;
  out.problem = p;
  if (out.problem.workload.engine == Engine::kIdeal) out.problem.workload.engine = caps.scheduler;
  const Simulator sim(out.problem);
  StatusOr<StrategySpace> space = engine::RestrictedSpace(
      caps, sim.problem().model, sim.problem().cluster.num_gpus,
      PlanSpaceOptions(sim.problem(), mtp));
  if (!space.ok()) return space.status();

  FailureStats failures;
  auto record = [&](const SearchResult& r) {
    out.evaluations += r.evaluations > 0 ? r.evaluations : r.calls;
  };
  {
    std::unique_ptr<Observer> outer =
        progress.Observe(fmt::format("{} oracle", engine::EngineName(id)));
    WorkBoundObserver bound(outer.get(), req.oracle_calls);
    const SearchResult r = SolveExact(sim, *space, &bound);
    record(r);
    if (!r.interrupted) {
      out.exact = true;
      out.found_by = "oracle";
      out.found = r.found;
      if (r.found) {
        out.best = r.best;
        out.eval = r.eval;
      }
    } else if (bound.inner_cancelled()) {
      return Status::Cancelled("interrupted");
    }
  }
  if (!out.exact) {
    // The restricted space is beyond the oracle's bound: the searcher on it.
    StatusOr<std::unique_ptr<Searcher>> searcher = MakeSearcher(req.search);
    if (!searcher.ok()) return Status::InvalidArgument("--search: " + searcher.status().message());
    std::unique_ptr<Observer> obs =
        progress.Observe(fmt::format("{} search {}", engine::EngineName(id), req.search));
    const SearchResult r = (*searcher)->Search(sim, *space, req.budget, req.seed, obs.get());
    record(r);
    out.found_by = (*searcher)->name();
    out.found = r.found;
    if (r.found) {
      out.best = r.best;
      out.eval = r.eval;
    }
  }
  if (out.found) {
    Strategy s = out.best;
    Evaluation e = out.eval;
    if (RefineBatch(sim, &s, &e) && e.tokens_per_s_per_gpu > out.eval.tokens_per_s_per_gpu &&
        engine::Launchable(caps, sim.problem().model, s)) {
      out.refined_from = out.best.batch > 0 ? out.best.batch : out.eval.batch;
      out.best = s;
      out.eval = e;
    }
  } else {
    out.why_none = fmt::format("{} launches no valid strategy for this problem",
                               engine::EngineTitle(id));
  }
  return out;
}

}  // namespace l2s::plan
