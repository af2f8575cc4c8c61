#include "cli/plan_replicas.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <utility>

#include "cli/output.h"
#include "plan/capacity.h"
#include "plan/space.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s::cli {

namespace {

std::string SizesList(const std::vector<int>& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? "" : i + 1 == sizes.size() ? " or " : ", ") + std::to_string(sizes[i]);
  return out;
}

// One size's plan as the plan itself would make it; `keep` gets the table / E's plan.
StatusOr<plan::SizeTrial> PlanSize(const Problem& q, engine::EngineId id, bool tabulate,
                                   const plan::AggRequest& req, int mtp,
                                   const plan::PlanProgress& progress, ReplicaSizing* keep) {
  plan::SizeTrial t;
  if (tabulate) {
    StatusOr<plan::EngineTable> tab = plan::PlanEngines(q, req, mtp, progress);
    if (!tab.ok()) return tab.status();
    if (tab->interrupted) return Status::Cancelled("interrupted");
    if (tab->fastest >= 0) {
      const plan::EnginePlan& e = tab->rows[static_cast<size_t>(tab->fastest)];
      t.found = true;
      t.tokens_per_s_per_gpu = e.eval.tokens_per_s_per_gpu;
      t.what = fmt::format("{}: {}", engine::EngineName(e.id), plan::LayoutLabel(q.model, e.best));
    } else {
      t.what = tab->rows.empty() ? std::string("no engine runs on this cluster")
                                 : tab->rows.front().why_none;
    }
    keep->table = std::move(*tab);
    return t;
  }
  if (id != engine::EngineId::kIdeal) {
    StatusOr<plan::EnginePlan> ep = plan::PlanForEngine(q, id, req, mtp, progress);
    if (!ep.ok()) return ep.status();
    t.found = ep->found;
    t.tokens_per_s_per_gpu =
        ep->eval.tokens_per_s_per_gpu * Simulator::EngineFactor(std::string(engine::EngineName(id)));
    t.what = ep->found ? plan::LayoutLabel(q.model, ep->best) : ep->why_none;
    keep->engine_plan = std::move(*ep);
    return t;
  }
  const Simulator sim(q);
  StatusOr<StrategySpace> space =
      StrategySpace::Make(q.model, q.cluster.num_gpus, plan::PlanSpaceOptions(q, mtp));
  if (!space.ok()) {
    t.what = space.status().message();
    return t;
  }
  StatusOr<plan::AggPlan> a = plan::PlanAggregated(sim, *space, req, progress);
  if (!a.ok()) return a.status();
  if (a->interrupted) return Status::Cancelled("interrupted");
  t.found = a->have_recommended;
  t.tokens_per_s_per_gpu = a->have_recommended ? a->recommended_eval.tokens_per_s_per_gpu : 0;
  t.what = a->have_recommended ? plan::LayoutLabel(q.model, a->recommended)
                               : a->failures.Reason(q);
  return t;
}

}  // namespace

StatusOr<ReplicaSizing> SizeReplicas(const Problem& full, engine::EngineId id, bool tabulate,
                                     int instance_gpus, const plan::AggRequest& req, int mtp,
                                     const plan::PlanProgress& progress) {
  ReplicaSizing out;
  const std::vector<int> sizes = plan::ReplicaInstanceSizes(full.cluster);
  if (instance_gpus > 0) {
    if (std::find(sizes.begin(), sizes.end(), instance_gpus) == sizes.end())
      return Status::InvalidArgument(fmt::format(
          "--instance-gpus {}: {} GPUs in NVLink domains of {} split into instances of {} GPUs",
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
  StatusOr<plan::ReplicaChoice> c = plan::ChooseReplicas(
      full, [&](const Problem& q) -> StatusOr<plan::SizeTrial> {
        return PlanSize(q, id, tabulate, req, mtp, progress, &kept[q.cluster.num_gpus]);
      });
  if (!c.ok()) return c.status();
  out.choice = std::move(*c);
  if (out.choice.chosen < 0) return out;  // no size found a layout: the plan says why as before
  ReplicaSizing& k = kept[out.choice.gpus_per_instance];
  out.table = std::move(k.table);
  out.engine_plan = std::move(k.engine_plan);
  out.active = out.choice.replicas > 1;
  return out;
}

std::string ReplicaSizingText(const ReplicaSizing& r) {
  const plan::ReplicaChoice& c = r.choice;
  if (!r.active && c.trials.empty()) return "";
  std::string out =
      r.active ? fmt::format("Replicas   {}, each serving on its own behind a router; the plan's "
                             "figures are one instance's (per GPU the same over all {} GPUs)\n",
                             plan::ReplicasText(c.replicas, c.gpus_per_instance),
                             c.replicas * c.gpus_per_instance)
           : c.chosen < 0
               ? std::string("Replicas   no instance size has a valid layout:\n")
               : fmt::format("Replicas   none: one instance over all {} GPUs is the best size\n",
                             c.gpus_per_instance);
  if (r.fixed) return out + "  instance size fixed by --instance-gpus\n\n";
  out += fmt::format("  {:>13} {:>10} {:>13}  {}\n", "GPUs/instance", "instances", "tokens/s/GPU",
                     "layout (the fastest engine's, without --engine) or why none");
  for (size_t i = 0; i < c.trials.size(); ++i) {
    const plan::SizeTrial& t = c.trials[i];
    out += fmt::format("{} {:>13} {:>10} {:>13}  {}\n",
                       static_cast<int>(i) == c.chosen ? ">" : " ", t.gpus, t.replicas,
                       t.found ? fmt::format("{:.2f}", t.tokens_per_s_per_gpu) : std::string("-"),
                       t.what);
  }
  out += "  (--instance-gpus N fixes the size; N = all GPUs plans one instance)\n\n";
  return out;
}

nlohmann::ordered_json ReplicaSizingJson(const ReplicaSizing& r, const std::string& router) {
  nlohmann::ordered_json j;
  const plan::ReplicaChoice& c = r.choice;
  j["instances"] = c.replicas;
  j["gpus_per_instance"] = c.gpus_per_instance;
  j["gpus"] = c.replicas * c.gpus_per_instance;
  j["fixed"] = r.fixed;
  nlohmann::ordered_json sizes = nlohmann::ordered_json::array();
  for (const plan::SizeTrial& t : c.trials) {
    nlohmann::ordered_json x;
    x["gpus_per_instance"] = t.gpus;
    x["instances"] = t.replicas;
    x["planned"] = t.planned;
    x["found"] = t.found;
    x["tokens_per_s_per_gpu"] = t.found ? nlohmann::ordered_json(t.tokens_per_s_per_gpu)
                                        : nlohmann::ordered_json();
    x["layout"] = t.found ? nlohmann::ordered_json(t.what) : nlohmann::ordered_json();
    x["why_none"] = t.found ? nlohmann::ordered_json() : nlohmann::ordered_json(t.what);
    sizes.push_back(x);
  }
  j["sizes"] = sizes;
  j["router"] = router.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(router);
  return j;
}

std::string ReplicaRouterCommand(launch::Engine engine, int instances) {
  std::vector<std::string> urls;
  const int port = engine == launch::Engine::kSglang  ? launch::kSglangDefaultPort
                   : engine == launch::Engine::kTrtllm ? launch::kTrtllmDefaultPort
                   : engine == launch::Engine::kAtom   ? launch::kAtomDefaultPort
                                                       : launch::kVllmDefaultPort;
  for (int i = 1; i <= instances; ++i) urls.push_back(fmt::format("http://<instance-{}>:{}", i, port));
  return launch::ReplicaRouterCommand(engine, urls);
}

}  // namespace l2s::cli
