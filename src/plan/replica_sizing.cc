#include "plan/replica_sizing.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plan/capacity.h"
#include "plan/space.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::plan {

namespace {

std::string SizesList(const std::vector<int>& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? "" : i + 1 == sizes.size() ? " or " : ", ") + std::to_string(sizes[i]);
  return out;
}

// One size's plan as the plan itself would make it; `keep` gets the table / E's plan.
StatusOr<SizeTrial> PlanSize(const Problem& q, bool whole, engine::EngineId id, bool tabulate,
                             const AggRequest& req, int mtp, const PlanProgress& progress,
                             ReplicaSizing* keep) {
  SizeTrial t;
  if (tabulate) {
    StatusOr<EngineTable> tab = PlanEngines(q, req, mtp, progress);
    if (!tab.ok()) return tab.status();
    if (tab->interrupted) return Status::Cancelled("interrupted");
    if (tab->fastest >= 0) {
      const EnginePlan& e = tab->rows[static_cast<size_t>(tab->fastest)];
      t.found = true;
      t.tokens_per_s_per_gpu = e.eval.tokens_per_s_per_gpu;
      t.what = fmt::format("{}: {}", engine::EngineName(e.id), LayoutLabel(q.model, e.best));
    } else {
      t.what = tab->rows.empty() ? std::string("no engine runs on this cluster")
                                 : tab->rows.front().why_none;
    }
    keep->table = std::move(*tab);
    return t;
  }
  if (id != engine::EngineId::kIdeal) {
    // A single-node engine (ATOM) has no instance over more than a node: a size without a layout.
    if (Status c = engine::CheckCluster(id, q.cluster.gpu.vendor, q.cluster.gpu.name,
                                        q.cluster.num_gpus, q.cluster.gpus_per_domain);
        !c.ok()) {
      t.what = c.message();
      return t;
    }
    StatusOr<EnginePlan> ep = PlanForEngine(q, id, req, mtp, progress);
    // A size the engine cannot plan at all (its space options rule it out there) is a size
    // without a layout; on every GPU, and when interrupted, the error is the plan's.
    if (!ep.ok() && (whole || ep.status().code() == Status::Code::kCancelled)) return ep.status();
    if (!ep.ok()) {
      t.what = ep.status().message();
      return t;
    }
    t.found = ep->found;
    t.tokens_per_s_per_gpu = ep->eval.tokens_per_s_per_gpu;  // under the engine's factor
    t.what = ep->found ? LayoutLabel(q.model, ep->best) : ep->why_none;
    keep->engine_plan = std::move(*ep);
    return t;
  }
  const Simulator sim(q);
  StatusOr<StrategySpace> space =
      StrategySpace::Make(q.model, q.cluster.num_gpus, PlanSpaceOptions(q, mtp));
  if (!space.ok()) {
    t.what = space.status().message();
    return t;
  }
  // The unrestricted space per size: the searcher's best, without the baselines and the oracle
  // (the oracle is most of a plan's time on these spaces: 0.3-0.4 s per size of gpt-moe-1.6t
  // against 0.04 s for the 4,000-call search); the chosen size's plan runs them.
  AggRequest r = req;
  r.no_baselines = true;
  r.oracle_calls = 0;
  StatusOr<AggPlan> a = PlanAggregated(sim, *space, r, progress);
  if (!a.ok()) return a.status();
  if (a->interrupted) return Status::Cancelled("interrupted");
  t.found = a->have_recommended;
  t.tokens_per_s_per_gpu = a->have_recommended ? a->recommended_eval.tokens_per_s_per_gpu : 0;
  t.what = a->have_recommended ? LayoutLabel(q.model, a->recommended)
                               : a->failures.Reason(q);
  return t;
}

}  // namespace

StatusOr<ReplicaSizing> SizeAggregatedReplicas(const Problem& full, engine::EngineId id,
                                               bool tabulate, int instance_gpus,
                                               const AggRequest& req, int mtp,
                                               const PlanProgress& progress) {
  ReplicaSizing out;
  out.layouts_of = tabulate ? std::string("the fastest engine's")
                   : id == engine::EngineId::kIdeal
                       ? std::string("the unrestricted search's")
                       : fmt::format("{}'s", engine::EngineTitle(id));
  const std::vector<int> sizes = ReplicaInstanceSizes(full.cluster);
  if (instance_gpus > 0) {
    if (std::find(sizes.begin(), sizes.end(), instance_gpus) == sizes.end())
      return Status::InvalidArgument(fmt::format(
          "{}: {} GPUs in NVLink domains of {} split into instances of {} GPUs",
          instance_gpus, full.cluster.num_gpus, full.cluster.gpus_per_domain, SizesList(sizes)));
    out.active = instance_gpus < full.cluster.num_gpus;
    out.fixed = true;
    out.choice.gpus_per_instance = instance_gpus;
    out.choice.replicas = full.cluster.num_gpus / instance_gpus;
    return out;
  }
  if (!full.model.is_moe() || sizes.size() < 2) return out;
  // The chosen size's table / plan is kept: the last planned size's is overwritten, so keep each
  // by size and pick the chosen one after.
  std::map<int, ReplicaSizing> kept;
  StatusOr<ReplicaChoice> c = ChooseReplicas(
      full, [&](const Problem& q) -> StatusOr<SizeTrial> {
        const int g = q.cluster.num_gpus;
        return PlanSize(q, g == full.cluster.num_gpus, id, tabulate, req, mtp, progress, &kept[g]);
      });
  if (!c.ok()) return c.status();
  // No size found a layout and the engine cannot run the whole cluster as one instance: that is
  // the answer's reason (as without replicas).
  if (c->chosen < 0 && id != engine::EngineId::kIdeal)
    if (Status st = engine::CheckCluster(id, full.cluster.gpu.vendor, full.cluster.gpu.name,
                                         full.cluster.num_gpus, full.cluster.gpus_per_domain);
        !st.ok())
      return Status::InvalidArgument("--engine: " + st.message());
  out.choice = std::move(*c);
  // No size found a layout: the whole cluster's plan (kept) says why, as without replicas.
  ReplicaSizing& k = kept[out.choice.chosen < 0 ? full.cluster.num_gpus : out.choice.gpus_per_instance];
  out.table = std::move(k.table);
  out.engine_plan = std::move(k.engine_plan);
  out.active = out.choice.replicas > 1;
  return out;
}

}  // namespace l2s::plan
