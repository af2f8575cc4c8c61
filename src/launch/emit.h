// `l2s plan --emit DIR`: the files that start a plan. One shell script per node (node-<k>.sh; for a
// disaggregated plan prefill-node-<k>.sh, decode-node-<k>.sh and router.sh), the engine's config
// files, a DEPLOY.md (what runs where, ports, the order to start, how to check it is up, the
// figures the plan expects) and, for a deployment on more than one node, Kubernetes manifests: a
// LeaderWorkerSet (lws.yaml) for an aggregated instance that spans nodes, a Dynamo graph
// deployment (dynamo-graph.yaml, DynamoGraphDeployment) for a disaggregated plan.
//
// Placement: instances of g GPUs on nodes of P GPUs. g <= P: floor(P/g) instances per node, each
// on its own CUDA_VISIBLE_DEVICES range and port (the engine's port + its slot on the node); g > P:
// ceil(g/P) whole nodes per instance, started with the engine's multi-node flags
// (launch/command.cc) and the node's NODE_RANK; HEAD_ADDR is the instance's first node.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "common/status.h"
#include "launch/disagg_launch.h"
#include "launch/launch.h"
#include "sim/simulator.h"

namespace l2s::launch {

struct EmitOptions {
  std::string model_id;                 // --model-id ("" = ResolveModelId)
  std::vector<std::string> plan_lines;  // the plan as `l2s plan` prints it, for DEPLOY.md
  // Aggregated: independent copies of the instance (plan/replicas.h), placed like every other
  // instance and reached through a router (router.sh, ReplicaRouterCommand).
  int replicas = 1;
  // Aggregated: the instances run as NVIDIA Dynamo workers (launch/dynamo.h) behind Dynamo's
  // frontend (frontend.sh) instead of the engine's own servers behind a router.
  bool dynamo = false;
  // Disaggregated: the pools come out of one cluster (DisaggSetup::shared; the plan priced the KV
  // of a prefill and a decode instance that fit one NVLink domain over NVLink), so the servers of
  // both roles are packed onto common nodes (node-<k>.sh, PlaceSharedNodes). False, or pools of
  // different GPUs or node sizes: each pool on nodes of its own (prefill-node-<k>.sh,
  // decode-node-<k>.sh; a fixed --prefill-gpus split, the pools of a mixed cluster).
  bool shared_nodes = true;
};

// One server placed on a node.
struct PlacedServer {
  int instance = 0;          // 0-based
  int node = 0;              // 0-based node of the pool
  int node_rank = 0;         // rank inside a multi-node instance
  int port = 0;              // HTTP port (0 on nodes that run no API server)
  std::string devices;       // CUDA_VISIBLE_DEVICES ("" = the whole node)
  int first_device = 0;      // the first GPU of `devices` (0 for the whole node)
};
// Places `instances` instances of `gpus` GPUs on nodes of `gpus_per_node` GPUs (see above):
// PlaceSharedNodes of the one pool. `base_port` is the engine's port. Ports are distinct per node
// and device ranges disjoint.
std::vector<PlacedServer> PlaceInstances(int instances, int gpus, int gpus_per_node, int base_port);

// One pool's servers for PlaceSharedNodes.
struct PoolGroup {
  int instances = 0;
  int gpus = 0;       // per instance
  int base_port = 0;  // the engine's port for the pool's servers (0: none)
};
// The servers of several pools packed onto one set of nodes of `gpus_per_node` GPUs (the pools of
// a disaggregated plan that share a cluster). Instances are taken in proportion across the groups
// (the i-th of a group of n at (i + 1/2) / n; ties in group order), each on the first node with
// its GPUs free (contiguous, from the lowest), or on ceil(gpus / P) whole new nodes when it spans
// nodes. A server's port is its group's base port plus the first offset not yet taken on its
// node (`reserved_port` > 0 is taken on every node: the router's, which may run on any of them).
// Returns each group's servers in instance order; nodes are numbered over all groups.
std::vector<std::vector<PlacedServer>> PlaceSharedNodes(const std::vector<PoolGroup>& groups,
                                                        int gpus_per_node, int reserved_port = 0);

// Writes the aggregated deployment of `s` (evaluated as `eval` in problem `p`) on `engine` into
// `dir` (created if missing). InvalidArgument when `dir` cannot be created or written (one line
// naming it), or `s` has no valid evaluation. `written` (may be null) gets the files, in order.
Status EmitDeployment(const std::string& dir, Engine engine, const Problem& p, const Strategy& s,
                      const Evaluation& eval, const EmitOptions& opt,
                      std::vector<std::string>* written);

// Writes the disaggregated deployment `l` (of its pools l.prefill_pool and l.decode_pool) into
// `dir`, and a DynamoGraphDeployment when the deployment spans more than one node and Dynamo's
// workers of l's engine run its pools as l does (`l` itself on Dynamo; none on AMD GPUs).
// InvalidArgument as above, or when `l` is not runnable.
Status EmitDisaggDeployment(const std::string& dir, const DisaggLaunch& l, const EmitOptions& opt,
                            std::vector<std::string>* written);

// ---- what `l2s plan --emit DIR` calls ----
// OK when `dir` exists as a directory or can be created (it is created); else InvalidArgument,
// one line naming it. Checked before the search.
Status CheckEmitDir(const std::string& dir);
// The aggregated plan's files for one engine: `asked` (the workers of the plan's --engine,
// WorkersOf) when it is a serving engine among `launch`, else the serving engine (not
// Megatron-LM) whose translation runs at the highest simulated throughput. With opt.dynamo (a
// Dynamo --engine) the servers are Dynamo workers of `asked`'s engine behind Dynamo's frontend. Each file runs that
// translation's strategy (t.launched) with its evaluation. Returns one line for the user ("wrote 4
// files to DIR for SGLang ..."); InvalidArgument when no engine can run the plan or a file cannot
// be written.
StatusOr<std::string> EmitAggregatedPlan(const std::string& dir, const Problem& p,
                                         const std::vector<EngineTranslation>& launch,
                                         std::optional<Engine> asked, const EmitOptions& opt);
// The disaggregated plan's files: the launch of `asked` (the plan's engine, DisaggEngineOf; for
// a Dynamo variant Dynamo's, whose workers run that variant's engine) when present, else the
// first runnable of SGLang, vLLM, TensorRT-LLM, Dynamo that expresses both pools exactly, else
// the first runnable one; Dynamo's launch (when present) for the Kubernetes graph.
StatusOr<std::string> EmitDisaggregatedPlan(const std::string& dir,
                                            const std::vector<DisaggLaunch>& launch,
                                            std::optional<DisaggEngine> asked,
                                            const EmitOptions& opt);

// ---- what `l2s capacity --emit DIR` calls ----
// The files that start a sized deployment: `instances` copies of one instance's layout `s` of
// problem `instance` (its percentile SLOs were the sizing's; its batch is the scheduler's) on the
// engine named `engine` (as --engine takes it: its workers' engine, Dynamo's workers for a Dynamo
// variant). The launch states the batch the simulator picks for one instance within its memory
// and at most `max_running` sequences per rank (the running-request limit the sizing simulated;
// 0: the problem's). Returns the line for the user; InvalidArgument when the engine cannot
// launch, no batch fits, or a file cannot be written.
StatusOr<std::string> EmitSizedAggregated(const std::string& dir, Problem instance, Strategy s,
                                          int instances, int max_running,
                                          const std::string& engine, const EmitOptions& opt);
// The same for a sized disaggregated deployment: `np` prefill instances of `sp` and `nd` decode
// instances of `sd`, placed as EmitOptions::shared_nodes says. `prefill` and `decode` are one
// instance's problems in any mode (the sizing's are serve-mode step costs); each role is launched
// and its expected figures stated in its own mode (sim/disagg.h PrefillProblem, DecodeProblem), as
// `plan --serving disagg --emit` does: the prefill figures at the prompts one step's token budget
// holds, the decode servers at most `max_running` per rank. The prefill servers admit
// `prefill_max_running` requests per rank (the limit the sizing simulated them with; 0: the
// prefill batch), so that prompts shorter than the nominal fill the budget as simulated.
StatusOr<std::string> EmitSizedDisaggregated(const std::string& dir, Problem prefill, Strategy sp,
                                             int np, Problem decode, Strategy sd, int nd,
                                             int max_running, int prefill_max_running,
                                             const std::string& engine, const EmitOptions& opt);

}  // namespace l2s::launch
