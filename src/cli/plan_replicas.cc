#include "cli/plan_replicas.h"

#include <fmt/core.h>

#include <string>
#include <vector>

namespace l2s::cli {

StatusOr<ReplicaSizing> SizeReplicas(const Problem& full, engine::EngineId id, bool tabulate,
                                     int instance_gpus, const plan::AggRequest& req, int mtp,
                                     const plan::PlanProgress& progress) {
  StatusOr<ReplicaSizing> r =
      plan::SizeAggregatedReplicas(full, id, tabulate, instance_gpus, req, mtp, progress);
  if (!r.ok() && r.status().code() == Status::Code::kInvalidArgument && instance_gpus > 0)
    return Status::InvalidArgument("--instance-gpus " + r.status().message());
  return r;
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
                     fmt::format("layout ({}) or why none", r.layouts_of));
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
  const int port = launch::DefaultPort(engine);
  for (int i = 1; i <= instances; ++i) urls.push_back(fmt::format("http://<instance-{}>:{}", i, port));
  return launch::ReplicaRouterCommand(engine, urls);
}

}  // namespace l2s::cli
