#include "plan/engines.h"

#include <fmt/core.h>

#include <memory>
#include <utility>

#include "engine/model_classes.h"
#include "engine/restrict.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "plan/refine.h"
#include "plan/replicas.h"
#include "plan/work_bound.h"

namespace l2s::plan {

namespace {

// The problem `--engine E` builds (cli ApplyEngineFlags): E's scheduler and, where the problem
// states no limit, E's default batch limit - so that the table's row for E is E's plan; and
// QuickReduce only where E runs it.
Problem EngineProblem(const Problem& p, engine::EngineId id) {
  Problem q = p;
  if (!engine::CapabilitiesOf(id).quick_reduce) q.workload.quick_reduce = QuickReduce::kOff;
  if (q.workload.engine == Engine::kIdeal) {
    q.workload.engine = engine::CapabilitiesOf(id).scheduler;
    SetEngineFigures(std::string(engine::EngineName(id)), &q.workload);
    if (q.workload.max_batch == 0) q.workload.max_batch = engine::DefaultsOfEngine(id).max_batch;
  }
  return q;
}

}  // namespace

std::vector<engine::EngineId> TabulatedEngines(const ClusterSpec& cluster) {
  constexpr engine::EngineId kServing[] = {engine::EngineId::kVllm, engine::EngineId::kSglang,
                                           engine::EngineId::kTrtllm, engine::EngineId::kAtom};
  std::vector<engine::EngineId> out;
  for (engine::EngineId id : kServing)
    if (engine::CheckCluster(id, cluster.gpu.vendor, cluster.gpu.name, cluster.num_gpus,
                             cluster.gpus_per_domain)
            .ok())
      out.push_back(id);
  return out;
}

std::string TabulatedTitles(const ClusterSpec& cluster) {
  const std::vector<engine::EngineId> ids = TabulatedEngines(cluster);
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += i + 1 == ids.size() ? " and " : ", ";
    out += engine::EngineTitle(ids[i]);
  }
  return out;
}

StatusOr<EnginePlan> PlanForEngine(const Problem& p, engine::EngineId id, const AggRequest& req,
                                   int mtp, const PlanProgress& progress) {
  const engine::Capabilities& caps = engine::CapabilitiesOf(id);
  EnginePlan out;
  out.id = id;
  out.problem = EngineProblem(p, id);
  // An engine whose own registry lacks the model's class (ATOM) has no plan for it: a row that
  // says so, never the headline.
  if (!engine::LoadsModelClass(id, p.model)) {
    out.why_none = engine::ModelClassNote(id, p.model);
    return out;
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
    if (run->ran) out.evaluations += run->result.calls;
  if (out.found) {
    out.best = a.recommended;
    out.eval = a.recommended_eval;
    out.refined_from = a.refined_from;
    if (const std::optional<launch::Engine> e = launch::WorkersOf(caps.name)) {
      launch::LaunchOptions opt;
      opt.eval = &out.eval;
      out.command = launch::MakeLaunchCommand(*e, out.problem, out.best, opt);
    }
  } else {
    out.why_none = fmt::format("{} launches no valid strategy for this problem: {}",
                               engine::EngineTitle(id), a.failures.Reason(sim.problem()));
  }
  return out;
}

StatusOr<EngineTable> PlanEngines(const Problem& p, const AggRequest& req, int mtp,
                                  const PlanProgress& progress) {
  EngineTable t;
  for (engine::EngineId id : TabulatedEngines(p.cluster)) {
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
    t.rows.push_back(std::move(*ep));
  }
  t.fastest = FastestPlan(t.rows, false);
  return t;
}

int FastestPlan(const std::vector<EnginePlan>& rows, bool disaggregating) {
  // Engines whose model-class list names the model (or that keep none) first; an engine whose
  // list lacks it (TensorRT-LLM's page: engine/model_classes.h) only when no other has a plan.
  for (const bool listed_only : {true, false}) {
    int best = -1;
    for (size_t i = 0; i < rows.size(); ++i) {
      const EnginePlan& e = rows[i];
      if (!e.found || (disaggregating && !engine::CapabilitiesOf(e.id).disaggregation)) continue;
      if (listed_only && !engine::ModelClassNote(e.id, e.problem.model).empty()) continue;
      if (best < 0 || e.eval.tokens_per_s_per_gpu > rows[best].eval.tokens_per_s_per_gpu)
        best = static_cast<int>(i);
    }
    if (best >= 0) return best;
  }
  return -1;
}

StatusOr<ParetoSeries> EngineParetoSeries(const Problem& p, engine::EngineId id,
                                          const AggRequest& req, int mtp,
                                          const std::vector<double>& limits,
                                          const PlanProgress& progress, int jobs) {
  const engine::Capabilities& caps = engine::CapabilitiesOf(id);
  const Problem q = EngineProblem(p, id);
  // An MoE model's instances (plan/replicas.h): each limit's point is the best per GPU over the
  // sizes the cluster tiles into that hold the weights, as `l2s plan` sizes its headline; a dense
  // model's replicas are its dp ranks, in the one space over every GPU.
  struct Size {
    int gpus;
    Problem problem;
    StrategySpace space;
  };
  std::vector<Size> sizes;
  const int n = q.cluster.num_gpus;
  for (int g : q.model.is_moe() ? ReplicaInstanceSizes(q.cluster) : std::vector<int>{n}) {
    if (!PlannedSize(q, g)) continue;
    Problem qi = InstanceProblem(q, g);
    StatusOr<StrategySpace> space =
        engine::RestrictedSpace(caps, qi.model, g, PlanSpaceOptions(qi, mtp));
    if (!space.ok()) {
      if (g == n) return space.status();
      continue;
    }
    sizes.push_back({g, std::move(qi), std::move(*space)});
  }
  AggregatedSweepOptions opt;
  opt.searcher = req.search;
  opt.budget = req.budget;
  opt.seed = req.seed;
  opt.oracle_calls = req.oracle_calls;
  std::unique_ptr<Observer> observer =
      progress.Observe(fmt::format("pareto sweep {}", engine::EngineName(id)));
  return SweepTpot(fmt::format("{} launchable", engine::EngineTitle(id)), limits,
                   [&](double limit_ms) {
                     SweepAnswer best;
                     for (const Size& z : sizes) {
                       SweepAnswer ans =
                           BestAggregatedAtTpot(z.problem, z.space, limit_ms, opt, observer.get());
                       if (ans.cancelled || progress.Interrupted()) {
                         best.cancelled = true;
                         break;
                       }
                       if (!ans.point) continue;
                       // Strategies off the engine's space are never proposed; say so if one is.
                       StatusOr<Strategy> s = FromText(ans.point->strategy);
                       if (!s.ok() || !engine::Launchable(caps, z.problem.model, *s)) continue;
                       if (z.gpus < n)
                         ans.point->strategy = ReplicatedText(n / z.gpus, ans.point->strategy);
                       // Ties go to the larger instance (sizes ascend).
                       if (!best.point || ans.point->tokens_per_s_per_gpu >=
                                              best.point->tokens_per_s_per_gpu * (1 - 1e-9))
                         best.point = ans.point;
                     }
                     return best;
                   },
                   jobs);
}

StatusOr<EngineAggPlan> PlanOnEngine(const Simulator& sim, const StrategySpace& space,
                                     engine::EngineId id, std::optional<EnginePlan> given,
                                     const AggRequest& req, int mtp, const PlanProgress& progress) {
  EngineAggPlan out;
  if (id == engine::EngineId::kIdeal) {
    StatusOr<AggPlan> u = PlanAggregated(sim, space, req, progress);
    if (!u.ok()) return u.status();
    out.plan = std::move(*u);
    return out;
  }
  const Problem& p = sim.problem();
  const engine::Capabilities& caps = engine::CapabilitiesOf(id);
  StatusOr<StrategySpace> restricted = engine::RestrictedSpace(caps, space);
  if (!restricted.ok()) return restricted.status();
  if (!given) {
    StatusOr<EnginePlan> ep = PlanForEngine(p, id, req, mtp, progress);
    if (ep.ok()) given = std::move(*ep);
    else if (ep.status().code() != Status::Code::kCancelled) return ep.status();
  }
  if (given) {
    out.plan = std::move(given->plan);
    out.exact = given->exact;
  } else {  // interrupted: what the restricted search has, launchable only
    AggRequest r = req;
    r.admissible = [&caps, &p](const Strategy& s) { return engine::Launchable(caps, p.model, s); };
    StatusOr<AggPlan> planned = PlanAggregated(sim, *restricted, r, progress);
    if (!planned.ok()) return planned.status();
    out.plan = std::move(*planned);
  }
  if (!progress.Interrupted()) {
    StatusOr<AggPlan> u = PlanAggregated(sim, space, req, progress);
    if (!u.ok()) return u.status();
    out.ideal = std::move(*u);
  }
  return out;
}

}  // namespace l2s::plan
