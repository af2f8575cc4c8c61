// Launch commands of a disaggregated (prefill/decode) deployment: a prefill pool and a decode pool,
// each `instances` copies of one strategy, joined by a KV-cache transfer and a router. For SGLang
// (--disaggregation-mode), vLLM (a KV-transfer connector per side and a P/D proxy), TensorRT-LLM
// (context and generation servers behind `trtllm-serve disaggregated`) and NVIDIA Dynamo (a
// frontend with prefill and decode worker counts over one of those engines), with what each engine
// cannot express and what it runs instead, as launch.h does for aggregated plans. The rules are
// stated in docs/PLAN.md ("Disaggregated plans"); this file is their only implementation.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "launch/launch.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::launch {

// One pool of a disaggregated plan: `instances` copies of `strategy`, each on `gpus_per_instance`
// GPUs. `problem` is the problem ONE instance solves as the simulator sees it: the model, a
// cluster of gpus_per_instance GPUs of the pool's GPU type (problem.cluster.gpu, with its NVLink
// domain size), and the workload (the prefill pool typically in prefill mode, the decode pool in
// decode or serve mode). Both pools' workloads carry the request's isl and osl: the engines are
// started with a maximum length of isl + osl on both sides.
struct PoolPlan {
  Strategy strategy;
  int instances = 1;
  int gpus_per_instance = 0;
  Problem problem;
  // Running requests per rank the servers admit when it is not the strategy's batch
  // (LaunchOptions::max_running: a sized prefill pool's simulated limit); 0 = the batch, or,
  // with `engine_running_limit`, SGLang's and vLLM's own default (DefaultMaxRunning for the
  // launched MTP depth and dp) where it exceeds the batch: prefill servers as the engines' P/D
  // recipes run them, a step holding what its token budget holds (TensorRT-LLM's context
  // servers keep the batch, as its recipes size max_batch_size).
  int max_running = 0;
  bool engine_running_limit = false;
};

// OK when the pool is launchable: instances >= 1, gpus_per_instance == strategy.gpus() ==
// problem.cluster.num_gpus, and the strategy structurally valid for the model (CheckStrategy).
// `what` names the pool in the message ("prefill pool").
Status CheckPoolPlan(const PoolPlan& pool, std::string_view what);

// Engines with disaggregated serving. Megatron-LM has none.
enum class DisaggEngine { kSglang, kVllm, kTrtllm, kDynamo };
inline constexpr std::array<DisaggEngine, 4> kDisaggEngines = {
    DisaggEngine::kSglang, DisaggEngine::kVllm, DisaggEngine::kTrtllm, DisaggEngine::kDynamo};
std::string_view DisaggEngineName(DisaggEngine e);   // "sglang", "vllm", "trtllm", "dynamo"
std::string_view DisaggEngineTitle(DisaggEngine e);  // "SGLang", "vLLM", "TensorRT-LLM", "NVIDIA Dynamo"
// Whether the engine has a build for GPUs of `vendor` (engine::RunsOn of its capability row).
bool DisaggRunsOn(DisaggEngine e, std::string_view vendor);

// KV-cache transfer library between the pools. NIXL: every engine (SGLang
// --disaggregation-transfer-backend nixl, vLLM NixlConnector, TensorRT-LLM cache_transceiver
// backend NIXL, Dynamo). Mooncake: SGLang (its default) and vLLM (MooncakeConnector).
enum class KvTransfer { kNixl, kMooncake };
std::string_view KvTransferName(KvTransfer t);  // "nixl", "mooncake"
bool ParseKvTransfer(std::string_view name, KvTransfer* out);

// One process kind of the deployment, started `count` times.
struct DisaggProcess {
  std::string role;       // "prefill", "decode" or "router"
  int count = 1;          // copies to start: the pool's instances (1 for the router)
  int gpus = 0;           // GPUs of each copy (0 for the router)
  std::string command;    // one line; hosts are placeholders <prefill-1>, <decode-2>, ...
  std::string file_name;  // a file the command reads ("" = none), e.g. "disagg-config.yml"
  std::string file;       // its contents
  std::vector<std::string> notes;  // of this process (multi-node launch, batch meaning)
};

struct DisaggLaunch {
  DisaggEngine engine = DisaggEngine::kSglang;
  // The engine the workers run: the engine itself, or for Dynamo the one asked for, else the
  // first of SGLang, TensorRT-LLM, vLLM that expresses both pools exactly (else the runnable one
  // with the fewest unsupported choices).
  Engine backend = Engine::kSglang;
  KvTransfer transfer = KvTransfer::kNixl;  // the KV-cache transfer library it was made with
  // What the engine cannot express, one line each, prefixed "prefill: ", "decode: " or "both: ",
  // saying what the plan wants, why the engine cannot do it and what it runs instead.
  std::vector<std::string> unsupported;
  bool runnable = false;  // both pools have a valid repair; false: `processes` is empty
  // What the commands run per pool (the plan's strategy, or its best repair) and its simulated
  // evaluation in that pool's problem.
  Strategy prefill, decode;
  Evaluation prefill_eval, decode_eval;
  std::vector<DisaggProcess> processes;  // prefill, decode, router (Dynamo: frontend first)
  std::vector<std::string> notes;        // of the whole deployment
  PoolPlan prefill_pool, decode_pool;    // the pools as given (instances, GPUs, problems)
};

// The launch of the two pools on `engine` with `transfer`. For Dynamo, `dynamo_backend` fixes
// the engine its workers run (default: chosen as described at DisaggLaunch::backend).
// InvalidArgument when a pool fails CheckPoolPlan, the pools are of different models or the
// backend is Megatron-LM.
StatusOr<DisaggLaunch> MakeDisaggLaunch(DisaggEngine engine, const PoolPlan& prefill,
                                        const PoolPlan& decode,
                                        KvTransfer transfer = KvTransfer::kNixl,
                                        std::optional<Engine> dynamo_backend = std::nullopt);
// The same for every engine of kDisaggEngines that runs on both pools' GPUs (DisaggRunsOn:
// TensorRT-LLM and Dynamo on NVIDIA only): `first` (the plan's --engine) first, then the others
// in kDisaggEngines order. `dynamo_backend` fixes the engine Dynamo's workers run (--engine
// dynamo+E); default as at DisaggLaunch::backend.
StatusOr<std::vector<DisaggLaunch>> TranslateDisaggPlan(
    const PoolPlan& prefill, const PoolPlan& decode, KvTransfer transfer = KvTransfer::kNixl,
    std::optional<DisaggEngine> first = std::nullopt,
    std::optional<Engine> dynamo_backend = std::nullopt);
// The disaggregated engine of --engine `id`: SGLang, vLLM and TensorRT-LLM themselves, Dynamo for
// each Dynamo variant; nullopt for the ideal engine and engines without disaggregated serving.
std::optional<DisaggEngine> DisaggEngineOf(engine::EngineId id);

}  // namespace l2s::launch
