// Aggregated replicas: an aggregated deployment of G GPUs served as R independent instances of
// g = G / R GPUs each, behind a router. A dense model's data-parallel ranks are such replicas
// already (Simulator::SyncRanks is 1), but an MoE model's attention-DP ranks step together through
// the experts' collectives, so its strategy space has one instance over every GPU. An instance
// serves on its own: R instances serve R times one instance's tokens/s on R times its GPUs, so
// the per-GPU figures of the deployment are the instance's and `l2s eval` of the layout on g GPUs
// prints them. `l2s plan` sizes the instance with ChooseReplicas (docs/PLAN.md "Replicas").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/simulator.h"

namespace l2s::plan {

// The instance sizes, in GPUs, into which cluster `c` tiles exactly, ascending: every g that
// divides c.num_gpus and either divides the NVLink domain (an instance inside one domain) or is a
// whole number of domains (an instance of whole domains). The last is c.num_gpus itself (one
// instance). E.g. 16 x 8 GPUs: 1, 2, 4, 8, 16, 32, 64, 128; one NVL72 domain: every divisor of 72.
std::vector<int> ReplicaInstanceSizes(const ClusterSpec& c);

// `p` on one instance of `gpus` GPUs of its cluster: the same GPU type, NVLink domain size and
// scale-out network, num_gpus = gpus (what `l2s eval --gpus gpus` builds).
Problem InstanceProblem(const Problem& p, int gpus);

// Whether `gpus` GPUs of p's type hold p's weights at all: WeightBytes(model, workload.weight)
// <= gpus x HBM. Necessary, not sufficient (KV cache, activations and the runtime
// reserve come on top); sizes failing it are not planned.
bool CanHoldWeights(const Problem& p, int gpus);

// Whether an instance size of p's cluster is planned: its GPUs hold the weights, or it is the
// whole cluster (always planned, so that its verdict is the plan's as without replicas).
bool PlannedSize(const Problem& p, int gpus);

// "<n>x <strategy>": n instances of a strategy (replicated points of `plan --pareto`, sweep
// rows); SplitReplicatedText reads it back (false when `text` has no "<digits>x " prefix).
std::string ReplicatedText(int instances, const std::string& strategy);
bool SplitReplicatedText(const std::string& text, int* instances, std::string* strategy);

// One instance size's plan.
struct SizeTrial {
  int gpus = 0;          // per instance
  int replicas = 0;      // instances over the cluster
  bool planned = false;  // false: the GPUs cannot hold the weights (CanHoldWeights), not planned
  bool found = false;    // the plan found a valid layout
  double tokens_per_s_per_gpu = 0;  // the instance's (= the deployment's) when found
  std::string what;      // the layout in short when found, else why none (one line)
};

struct ReplicaChoice {
  int gpus_per_instance = 0;     // the chosen size (0: no size found a layout)
  int replicas = 0;
  int chosen = -1;               // index into trials
  std::vector<SizeTrial> trials; // every size of ReplicaInstanceSizes, ascending
};

// Plans one instance (InstanceProblem) and reports its best: set found, tokens_per_s_per_gpu and
// what (gpus, replicas and planned are set by ChooseReplicas). An error stops the sizing.
using PlanInstanceFn = std::function<StatusOr<SizeTrial>(const Problem& instance)>;

// Plans every size of ReplicaInstanceSizes(p.cluster) that can hold the weights and chooses the
// highest tokens/s per GPU; a tie (within a relative 1e-9) goes to the larger instance (fewer
// servers to run). The whole cluster is always planned, whatever CanHoldWeights says, so that
// its verdict is the plan's as without replicas. Errors: the first error of plan_instance.
StatusOr<ReplicaChoice> ChooseReplicas(const Problem& p, const PlanInstanceFn& plan_instance);

// "9 instances x 8 GPUs (72 GPUs)" or "1 instance x 72 GPUs".
std::string ReplicasText(int replicas, int gpus_per_instance);

}  // namespace l2s::plan
