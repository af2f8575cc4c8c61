// NVIDIA Dynamo's commands: one frontend (`python -m dynamo.frontend`: the OpenAI HTTP server and
// its router) and workers that each run one engine instance (SGLang, vLLM or TensorRT-LLM) behind
// `python -m dynamo.<engine>`. Workers find the frontend through Dynamo's discovery service (etcd
// by default), so the frontend lists no worker addresses. The disaggregated launch
// (disagg_launch.h) and the aggregated one below share the worker command; the rules are stated
// in docs/PLAN.md ("Dynamo").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/launch.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::launch {

// The frontend's HTTP port (dynamo.frontend --http-port; its default).
inline constexpr int kDynamoFrontendPort = 8000;

// "python -m dynamo.frontend --http-port 8000".
std::string DynamoFrontendCommand();

// What every Dynamo deployment needs besides its processes: the discovery service (etcd) and,
// for KV-event routing, NATS, reachable from every host (ETCD_ENDPOINTS, NATS_SERVER).
std::string DynamoDiscoveryNote();

// Whether Dynamo has workers for `backend`: SGLang, vLLM and TensorRT-LLM (not Megatron-LM or
// ATOM).
bool DynamoHasWorkersFor(Engine backend);

// One Dynamo worker running `s` on `backend` (DynamoHasWorkersFor) for problem `p`: the backend's own command (MakeLaunchCommand with `o`, which decides
// ports, devices, memory fractions and multi-node flags) behind `python -m dynamo.<backend>`.
// SGLang and vLLM take their own flags; TensorRT-LLM's worker reads the parallel sizes, limits
// and engine settings from the YAML file `trtllm_file` (--extra-engine-args; returned as
// extra_file_name / extra_file, o.trtllm_yaml appended to it). Aggregated form: the caller adds
// a disaggregated worker's role flags.
LaunchCommand DynamoWorkerCommand(Engine backend, const Problem& p, const Strategy& s,
                                  LaunchOptions o, const std::string& trtllm_file);

// An aggregated plan on Dynamo: one frontend and `workers` workers of `gpus_per_worker` GPUs, each
// running the backend's translation of the plan (t.launched).
struct DynamoAggLaunch {
  Engine backend = Engine::kVllm;
  bool runnable = false;      // the backend runs the plan (t.runnable); false: no commands
  int workers = 0;            // instances, times dp for a dense model (its data-parallel
                              // replicas are independent: one worker each)
  int gpus_per_worker = 0;
  std::string frontend;       // DynamoFrontendCommand()
  LaunchCommand worker;       // one worker's command (and TensorRT-LLM's YAML)
  std::vector<std::string> notes;
};

// The Dynamo launch of the backend's translation `t` of an aggregated plan for problem `p` (one
// instance's problem), `instances` independent copies of it (plan/replicas.h).
DynamoAggLaunch MakeDynamoAggLaunch(const EngineTranslation& t, const Problem& p, int instances);

}  // namespace l2s::launch
