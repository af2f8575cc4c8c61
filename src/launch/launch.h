// From a plan to a deployment: the launch command of each inference engine (vLLM, SGLang,
// TensorRT-LLM, Megatron-LM style arguments), exactly which of the plan's choices an engine cannot
// express and what it runs instead, and the best strategy each engine CAN express as-is
// (exhaustive over the degrees, batch and sp with Megatron's per-operator dims, simulated).
// The engines' rules are stated in docs/PLAN.md ("Engine rules"); this file is their only
// implementation.
//
// Vocabulary (see src/strategy/strategy.h): a stage has G = tp*dp GPUs; attention runs with
// tensor parallelism tp and attention data parallelism dp inside it; MoE layers with expert
// parallelism ep and expert tensor parallelism etp = G/ep; `batch` is the number of sequences per
// attention-dp rank in one pipeline microbatch.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "model/model.h"
#include "search/search.h"
#include "sim/simulator.h"
#include "strategy/space.h"
#include "strategy/strategy.h"

namespace l2s::launch {

enum class Engine { kVllm, kSglang, kTrtllm, kMegatron, kAtom };
inline constexpr std::array<Engine, 5> kAllEngines = {
    Engine::kVllm, Engine::kSglang, Engine::kTrtllm, Engine::kMegatron, Engine::kAtom};
inline constexpr size_t kNumEngines = kAllEngines.size();
// "vllm", "sglang", "trtllm", "megatron", "atom" (JSON keys)
std::string_view EngineName(Engine e);
// "vLLM", "SGLang", "TensorRT-LLM", "Megatron-LM", "ATOM"
std::string_view EngineTitle(Engine e);
// Whether the engine has a build for GPUs of `vendor` (engine::RunsOn: TensorRT-LLM NVIDIA only,
// ATOM AMD only).
bool RunsOn(Engine e, std::string_view vendor);
// The simulator's scheduler for the engine's servers (engine::SchedulerOf of its capability row:
// ATOM runs vLLM's, Megatron-LM none, kIdeal).
l2s::Engine SchedulerOf(Engine e);
// The engine whose command line a plan for engine `name` (engine::ParseEngineId spelling) runs:
// its workers' (Dynamo + SGLang -> SGLang); nullopt for no engine ("", "ideal") or an unknown one.
std::optional<Engine> WorkersOf(std::string_view name);

// ---- words for the per-operator choices (shared with `l2s plan`'s table) ----
// What the operator is, e.g. "MLP down-projection" for dense_ffn2.
std::string OpTitle(Op op);
// The choice in words with the dim in parentheses, e.g. "split on hidden (dim1)" for dense_ffn2
// dim1, "split on heads (dim0)" for attn_core dim0, "not split: whole weights, tokens divided
// (none)" for a matmul with none. Derived from which tensor dimension the dim cuts (strategy.h).
std::string DimWords(Op op, Dim d);

// The model id the commands load, and where it came from. In order: ModelSpec::launch_id (the
// user's --model-id); the HuggingFace repo id of a
// preset built from a public config (e.g. "deepseek-ai/DeepSeek-V3"); a --model given as a repo
// id ("org/name" that is not a local path) itself; for a config given by path
// (ModelSpec::name ends in ".json"), the config's own "_name_or_path" / "name_or_path" when it is
// a repo id ("org/name"), else the file name "org--name.json" of ../shared/models/hf read as
// repo "org/name", else the folder holding a config.json that sits next to weights
// (*.safetensors); else a placeholder "<NAME-checkpoint>" (synthetic GPT-MoE models, or a bare
// config) with a note saying to pass --model-id. Never the folder of a bare config file.
struct ModelId {
  std::string id;
  std::string source;       // "preset", "--model repo id", "config name field", "file name",
                            // "checkpoint folder",
                            // "placeholder" (or "--model-id" when given by the user)
  std::string note;         // non-empty for a placeholder: what to do
  bool placeholder = false;
};
ModelId ResolveModelId(const ModelSpec& m);
// ResolveModelId(m).id.
std::string ModelArgument(const ModelSpec& m);

// ---- expressibility ----
// The choices of `s` that `engine` cannot express, one line each, saying what the plan wants,
// why the engine cannot do it and what it does instead. Empty: expressible as-is. `role`: `s` is
// a server of a disaggregated pool (engine::FindViolations' role: vLLM's has no pipeline stages).
std::vector<std::string> UnsupportedChoices(Engine engine, const ModelSpec& m, const Strategy& s,
                                            engine::Role role = engine::Role::kServer);
bool Expressible(Engine engine, const ModelSpec& m, const Strategy& s);

// What the engine can run instead of `s`: Megatron dims (operators the model lacks: none), sp off
// where unsupported, and each way of repairing degrees the engine cannot express (e.g. vLLM:
// ep -> 1 or ep -> tp*dp). Only structurally valid candidates; {s} when `s` is expressible; empty
// when no repair is valid.
std::vector<Strategy> EngineAlternatives(Engine engine, const ModelSpec& m, const Strategy& s,
                                         engine::Role role = engine::Role::kServer);

// ---- commands ----
struct LaunchCommand {
  std::string command;               // one line, ready to paste (after filling the model path)
  std::string extra_file_name;       // e.g. "extra-llm-api-config.yml" ("" = none)
  std::string extra_file;            // its contents
  std::vector<std::string> notes;    // multi-node launch, quantised checkpoints, batch meaning
};
// Which side of a deployment a server is: aggregated, or the prefill / decode pool of a
// disaggregated plan (SGLang's DeepEP mode follows it: auto / normal / low_latency).
enum class ServeRole { kAggregated, kPrefill, kDecode };

// Where and how one server of the plan starts, beyond the strategy (src/launch/command.cc).
struct LaunchOptions {
  std::string model_id;            // "" = ResolveModelId(problem.model)
  // The plan's simulated evaluation of this strategy: its memory (weight/kv/state/act/reserve
  // bytes per GPU) sets the memory fraction flags. nullptr or not valid: the fractions are left
  // at the engine's default and a note says so.
  const Evaluation* eval = nullptr;
  ServeRole role = ServeRole::kAggregated;
  int port = 0;                    // HTTP port; 0 = the engine's usual one
  bool listen_all = false;         // --host 0.0.0.0 (servers other hosts reach)
  std::string cuda_visible_devices;  // "" = all GPUs of the node; else "0,1,2,3" (env prefix)
  // A server spanning several nodes: node_rank < 0 writes "${NODE_RANK}" (set by the node's
  // script); the head node's address is "${HEAD_ADDR}".
  int node_rank = -1;
  // TensorRT-LLM: the extra LLM-API YAML's file name and text appended to it (the disaggregated
  // commands add the KV-cache transceiver there); other engines ignore both.
  std::string trtllm_file = "extra-llm-api-config.yml";
  std::string trtllm_yaml;
  // Sequences in flight per rank (and microbatch) the server admits, where it is not the
  // strategy's batch: a prefill pool's running-request limit (a step then holds what the token
  // budget holds), `max_running_why` says which (the notes; "" = the limit a sizing's
  // request-level simulation admitted under). 0: the batch.
  int max_running = 0;
  std::string max_running_why;
};

// Ports and addresses the commands use (the engines' usual ones).
inline constexpr int kSglangDefaultPort = 30000;
inline constexpr int kVllmDefaultPort = 8000;
inline constexpr int kAtomDefaultPort = 8000;   // ATOM api_server.py DEFAULT_PORT (--server-port)
inline constexpr int kTrtllmDefaultPort = 8000;
inline constexpr int kDistInitPort = 5000;      // SGLang --dist-init-addr, torchrun master port
inline constexpr int kVllmDpRpcPort = 13345;    // vLLM --data-parallel-rpc-port
inline constexpr int kRayPort = 6379;           // ray start --head
// The API server's port of `engine`'s command (0 for Megatron-LM, which serves none).
int DefaultPort(Engine engine);

// The router in front of independent instances of engine `e` (aggregated replicas), `urls` each
// an instance's API server ("http://host:port"), listening on kReplicaRouterPort: SGLang's
// sglang-router (`python -m sglang_router.launch_router --worker-urls ...`), else vLLM's router in
// its regular mode, an OpenAI reverse proxy (`vllm-router --worker-urls ...`, --backend trtllm
// for TensorRT-LLM). "" for Megatron-LM or fewer than two urls.
inline constexpr int kReplicaRouterPort = 8080;
std::string ReplicaRouterCommand(Engine e, const std::vector<std::string>& urls);

// The environment prefix ("NAME=0,1,2,3 ", "" for no `devices`) that gives a server the GPUs
// `devices` of its node on GPUs of `vendor` (GpuSpec::vendor): CUDA_VISIBLE_DEVICES on NVIDIA; on
// AMD HIP_VISIBLE_DEVICES, which the ROCm runtime reads, and CUDA_VISIBLE_DEVICES beside it with
// the same list (vLLM's ROCm platform copies the one to the other and refuses two that differ).
std::string VisibleDevicesEnv(const std::string& vendor, const std::string& devices);

// GPUs one instance of `s` spans and the nodes (hosts, HostGpus: an HGX node, an NVL72 tray of
// 4) it needs.
int InstanceNodes(const Problem& p, const Strategy& s);

// The servers one instance of `s` runs as: a dense model's dp data-parallel replicas are
// independent, and TensorRT-LLM (one server has one tp group), every engine's Dynamo workers
// (balanced by Dynamo's frontend) and SGLang where the replicas span more than one node of
// `gpus_per_node` GPUs (its --dp-size starts every replica on each node's own GPUs) start each as
// a server of its own; otherwise 1. A MoE model's attention-DP ranks share the expert all-to-all
// and stay one server.
int SeparateReplicaServers(Engine e, bool dynamo, const ModelSpec& m, const Strategy& s,
                           int gpus_per_node);

// The longest sequence a server is started for (max model length, max_seq_len, context length):
// decode the context, prefill the prompt, serve prompt + output.
int64_t MaxSequenceLength(const Workload& w);

// The command running `s` on `engine` for problem `p`. `s` should be Expressible (choices the
// engine cannot express are silently dropped: pass EngineAlternatives' result). `s.batch` > 0.
// Every value is traceable to the plan (docs/PLAN.md "Launch"): parallel sizes, the batch
// (max running requests / seqs / batch size), the token budget the simulator priced
// (chunked-prefill size, max-num-batched-tokens, max_num_tokens: Workload::max_num_tokens or
// the engine's default), the CUDA-graph limit when the batch exceeds the engine's default,
// memory fractions from `opt.eval`, the DeepEP all-to-all for SGLang expert parallelism, the
// overlap, MTP and EPLB settings, ports, devices and multi-node flags from `opt`.
LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s,
                                const LaunchOptions& opt);
LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s);
// The same with TensorRT-LLM's extra LLM-API YAML named `trtllm_file` and `trtllm_yaml` appended to
// its contents (the disaggregated commands add the KV-cache transceiver there); other engines
// ignore both.
LaunchCommand MakeLaunchCommand(Engine engine, const Problem& p, const Strategy& s,
                                const std::string& trtllm_file, const std::string& trtllm_yaml);

// The repair of `plan` for `engine` (EngineAlternatives) with the highest simulated throughput:
// each alternative at the plan's batch, or at the simulator's best batch when that one is not
// valid. False when the engine has no structurally valid repair; otherwise *out is the chosen
// one (its batch the evaluated one when valid) and *eval its evaluation, invalid when no repair
// fits or meets the SLOs.
bool BestAlternative(const Simulator& sim, Engine engine, const Strategy& plan, Strategy* out,
                     Evaluation* eval, engine::Role role = engine::Role::kServer);

// ---- translation of a plan, and the best the engine can express ----
struct EngineTranslation {
  Engine engine = Engine::kVllm;
  // False when the engine's registry is a rule (ATOM) and lacks the model's class
  // (engine/model_classes.h): `unsupported` then holds that one line and nothing else is set.
  bool loads_model = true;
  std::vector<std::string> unsupported;  // UnsupportedChoices(plan); empty = exact
  bool runnable = false;                 // some alternative is valid (fits, meets the SLOs)
  Strategy launched;                     // what `command` runs: the plan, or its best repair
  Evaluation launched_eval;              // simulator evaluation of `launched`
  // `launched` under the engine's own scheduler and default limits when the plan was priced under
  // another's (other_scheduler: e.g. an SGLang command for a plan made for vLLM): what the
  // command delivers on this engine. own_reason says why own_eval is invalid. Not for Megatron-LM
  // (no serving scheduler).
  bool other_scheduler = false;
  Evaluation own_eval;
  std::string own_reason;
  LaunchCommand command;
  bool has_best = false;                 // the engine can run some valid strategy as-is
  Strategy best;                         // best strategy it can express as-is: ExpressibleBest's,
                                         // or `launched` when that is valid and faster
  Evaluation best_eval;
  LaunchCommand best_command;
};

// Best valid strategy per engine (index = position in kAllEngines), exhaustive over the space's
// pp, tp, ep, batch and mtp options and sp in {off, on}, with Megatron dims; every candidate is
// evaluated once and each engine keeps the best it can express. Stops early when the observer
// cancels (`cancelled` then true).
struct ExpressibleBest {
  std::array<bool, kNumEngines> found{};
  std::array<Strategy, kNumEngines> best{};
  std::array<Evaluation, kNumEngines> eval{};
  int64_t evaluated = 0;
  bool cancelled = false;
};
ExpressibleBest BestExpressible(const Simulator& sim, const StrategySpace& space,
                                Observer* observer);

// Translates `plan` for every engine that runs on the problem's GPUs (RunsOn, in kAllEngines
// order): the repair with the highest simulated throughput at the plan's batch (or at the
// simulator's best batch when that is invalid), and `best` from BestExpressible.
std::vector<EngineTranslation> TranslatePlan(const Simulator& sim, const Strategy& plan,
                                             const ExpressibleBest& best);

}  // namespace l2s::launch
