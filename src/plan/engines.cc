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
                                   int mtp, const PlanProgress& progress, bool search_if_inexact) {
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
    // The engine's space is the plan's answer, not a comparison: its oracle always runs, within
    // the request's bound (the default bound where the request skips the full space's oracle).
    WorkBoundObserver bound(outer.get(),
                            req.oracle_calls > 0 ? req.oracle_calls : kDefaultOracleCalls);
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
  if (!out.exact && !search_if_inexact) return out;
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

StatusOr<EngineTable> PlanEngines(const Problem& p, const AggRequest& req, int mtp,
                                  const PlanProgress& progress) {
  EngineTable t;
  for (engine::EngineId id : kTabulatedEngines) {
    StatusOr<EnginePlan> ep = PlanForEngine(p, id, req, mtp, progress);
    if (!ep.ok()) {
      if (ep.status().code() == Status::Code::kCancelled) {
        t.interrupted = true;
        break;
      }
      if (ep.status().code() == Status::Code::kInvalidArgument &&
          ep.status().message().rfind("--search", 0) == 0)
        return ep.status();
      continue;  // the space options fix a choice this engine lacks (e.g. an --mtp it cannot run)
    }
    const double k = Simulator::EngineFactor(std::string(engine::EngineName(id)));
    ep->eval.tokens_per_s *= k;
    ep->eval.tokens_per_s_per_gpu *= k;
    t.rows.push_back(std::move(*ep));
    const EnginePlan& e = t.rows.back();
    if (e.found && (t.fastest < 0 ||
                    e.eval.tokens_per_s_per_gpu > t.rows[t.fastest].eval.tokens_per_s_per_gpu))
      t.fastest = static_cast<int>(t.rows.size()) - 1;
  }
  return t;
}

}  // namespace l2s::plan
