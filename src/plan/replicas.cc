#include "plan/replicas.h"

#include <fmt/core.h>

#include <cmath>

#include "model/counts.h"

namespace l2s::plan {

std::vector<int> ReplicaInstanceSizes(const ClusterSpec& c) {
  std::vector<int> out;
  const int n = c.num_gpus, d = c.gpus_per_domain;
  if (n < 1) return out;
  for (int g = 1; g <= n; ++g) {
    if (n % g != 0) continue;
    if (g == n || (g <= d && d % g == 0) || (g > d && g % d == 0)) out.push_back(g);
  }
  return out;
}

Problem InstanceProblem(const Problem& p, int gpus) {
  Problem q = p;
  q.cluster.num_gpus = gpus;
  return q;
}

bool CanHoldWeights(const Problem& p, int gpus) {
  return WeightBytes(p.model, p.workload.weight) <= static_cast<double>(gpus) * p.cluster.gpu.hbm_bytes;
}

bool PlannedSize(const Problem& p, int gpus) {
  return gpus == p.cluster.num_gpus || CanHoldWeights(p, gpus);
}

std::string ReplicatedText(int instances, const std::string& strategy) {
  return fmt::format("{}x {}", instances, strategy);
}

bool SplitReplicatedText(const std::string& text, int* instances, std::string* strategy) {
  const size_t x = text.find("x ");
  if (x == std::string::npos || x == 0 || text.find_first_not_of("0123456789") != x) return false;
  *instances = std::stoi(text.substr(0, x));
  *strategy = text.substr(x + 2);
  return true;
}

StatusOr<ReplicaChoice> ChooseReplicas(const Problem& p, const PlanInstanceFn& plan_instance) {
  ReplicaChoice out;
  const int n = p.cluster.num_gpus;
  for (int g : ReplicaInstanceSizes(p.cluster)) {
    SizeTrial t;
    if (PlannedSize(p, g)) {
      StatusOr<SizeTrial> r = plan_instance(InstanceProblem(p, g));
      if (!r.ok()) return r.status();
      t = std::move(*r);
      t.planned = true;
    } else {
      t.what = fmt::format("the weights ({} GB) exceed {} {} {} GB",
                           std::lround(WeightBytes(p.model, p.workload.weight) / 1e9), g,
                           g == 1 ? "GPU's" : "GPUs'", std::lround(p.cluster.gpu.hbm_bytes * g / 1e9));
    }
    t.gpus = g;
    t.replicas = n / g;
    out.trials.push_back(std::move(t));
  }
  // From the largest size down, a size replaces the choice only when clearly better: ties go to
  // the larger instance.
  for (int i = static_cast<int>(out.trials.size()) - 1; i >= 0; --i) {
    const SizeTrial& t = out.trials[static_cast<size_t>(i)];
    if (!t.found) continue;
    if (out.chosen < 0 ||
        t.tokens_per_s_per_gpu >
            out.trials[static_cast<size_t>(out.chosen)].tokens_per_s_per_gpu * (1 + 1e-9))
      out.chosen = i;
  }
  if (out.chosen >= 0) {
    out.gpus_per_instance = out.trials[static_cast<size_t>(out.chosen)].gpus;
    out.replicas = out.trials[static_cast<size_t>(out.chosen)].replicas;
  }
  return out;
}

std::string ReplicasText(int replicas, int gpus_per_instance) {
  if (replicas <= 1) return fmt::format("1 instance x {} GPUs", gpus_per_instance);
  return fmt::format("{} instances x {} GPUs ({} GPUs)", replicas, gpus_per_instance,
                     replicas * gpus_per_instance);
}

}  // namespace l2s::plan
