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
  // The problem `--engine E` builds (cli ApplyEngineFlags): E's scheduler and, where the problem
  // states no limit, E's default batch limit - so that the table's row for E is E's plan.
  if (out.problem.workload.engine == Engine::kIdeal) {
    out.problem.workload.engine = caps.scheduler;
    if (out.problem.workload.max_batch == 0)
      out.problem.workload.max_batch = engine::DefaultsOfEngine(id).max_batch;
  }
  const Simulator sim(out.problem);
  StatusOr<StrategySpace> space = engine::RestrictedSpace(
      caps, sim.problem().model, sim.problem().cluster.num_gpus,
      PlanSpaceOptions(sim.problem(), mtp));
  if (!space.ok()) return space.status();

  AggRequest r = req;
  r.oracle_first = true;
  r.admissible = [&caps, &sim](const Strategy& s) {
    return engine::Launchable(caps, sim.problem().model, s);
  };
  StatusOr<AggPlan> planned = PlanAggregated(sim, *space, r, progress);
  if (!planned.ok()) return planned.status();
  if (planned->interrupted) return Status::Cancelled("interrupted");
  out.plan = std::move(*planned);
  const AggPlan& a = out.plan;
  out.exact = a.searcher_spec == "oracle";
  out.found = a.have_recommended;
  // Who found it: the oracle or the searcher (by its spec) for the main run, else the run's name
  // (megatron, default, expressible_scan, engine_repair).
  out.found_by = a.recommended_source != "search" ? a.recommended_source
                 : out.exact                      ? std::string("oracle")
                                                  : a.searcher_spec;
  for (const Run* run : {&a.main, &a.megatron, &a.def, &a.oracle})
    if (run->ran) out.evaluations += run->result.evaluations > 0 ? run->result.evaluations : run->result.calls;
  if (out.found) {
    out.best = a.recommended;
    out.eval = a.recommended_eval;
    out.refined_from = a.refined_from;
  } else {
    out.why_none = fmt::format("{} launches no valid strategy for this problem: {}",
                               engine::EngineTitle(id), a.failures.Reason(sim.problem()));
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
    ep->factor = k;
    t.rows.push_back(std::move(*ep));
    const EnginePlan& e = t.rows.back();
    if (e.found && (t.fastest < 0 ||
                    e.eval.tokens_per_s_per_gpu > t.rows[t.fastest].eval.tokens_per_s_per_gpu))
      t.fastest = static_cast<int>(t.rows.size()) - 1;
  }
  return t;
}

StatusOr<ParetoSeries> EngineParetoSeries(const Problem& p, engine::EngineId id,
                                          const AggRequest& req, int mtp,
                                          const std::vector<double>& limits,
                                          const PlanProgress& progress) {
  AggRequest r = req;
  r.no_baselines = true;
  const double k = Simulator::EngineFactor(std::string(engine::EngineName(id)));
  Status error;
  ParetoSeries series = SweepTpot(
      fmt::format("{} launchable", engine::EngineTitle(id)), limits, [&](double limit_ms) {
        SweepAnswer ans;
        Problem q = p;
        q.workload.tpot_ms = limit_ms;
        StatusOr<EnginePlan> ep = PlanForEngine(q, id, r, mtp, progress);
        if (!ep.ok()) {
          ans.cancelled = true;  // stop the sweep: interrupted, or an error returned below
          if (ep.status().code() != Status::Code::kCancelled) error = ep.status();
          return ans;
        }
        if (!ep->found) return ans;
        ParetoPoint pt;
        pt.tokens_per_s_per_gpu = ep->eval.tokens_per_s_per_gpu * k;
        pt.ttft_ms = ep->eval.ttft_s * 1e3;
        pt.tpot_ms = ep->eval.tpot_s * 1e3;
        pt.tokens_per_s_per_user = TokensPerUser(pt.tpot_ms);
        pt.strategy = ToText(ep->best);
        pt.found_by = ep->found_by;
        pt.exact = ep->exact;
        ans.point = pt;
        return ans;
      });
  if (!error.ok()) return error;
  return series;
}

}  // namespace l2s::plan
