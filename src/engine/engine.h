// The inference engines l2s plans for, and what each one can launch, as data: one row per engine
// and version in a capability table (engine.cc), the single source of the engine rules that the
// restricted strategy space (restrict.h), the launch commands (src/launch) and docs/PLAN.md
// ("Engine rules") follow.
//
// Vocabulary (src/strategy/strategy.h): a stage has G = tp*dp GPUs; attention runs tp-way inside
// each of dp attention-data-parallel ranks; MoE layers run ep-way expert parallel with expert
// tensor parallelism etp = G/ep. How that maps onto each engine's own flags:
//   vLLM     --tensor-parallel-size tp --data-parallel-size dp; MoE experts over the DP x TP group,
//            tensor-parallel (ep = 1) or expert-parallel with --enable-expert-parallel (ep = G).
//   SGLang   MoE with dp > 1: --tp G --dp dp --enable-dp-attention (attention TP = G/dp = tp),
//            --ep-size ep with ep = 1 or G (the all-to-all backend spans --tp); any ep dividing
//            G with dp = 1; dense models: --tp tp --dp dp = dp independent replicas.
//   TRT-LLM  MoE: tensor_parallel_size G, attention TP over all of it (tp = G) or attention DP
//            (enable_attention_dp, tp = 1), moe_expert_parallel_size ep; dense: dp servers.
//   Megatron --tensor-model-parallel-size tp, data parallel = world / (tp*pp), MoE parallel
//            folding: --expert-model-parallel-size ep --expert-tensor-parallel-size etp.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"
#include "sim/simulator.h"
#include "strategy/strategy.h"

namespace l2s::engine {

// Engine identity. kIdeal is no engine: the paper's unrestricted space ("--engine ideal").
enum class EngineId : uint8_t {
  kIdeal,
  kVllm,
  kSglang,
  kTrtllm,
  kDynamoVllm,
  kDynamoSglang,
  kDynamoTrtllm,
  kMegatron,
  kAtom,
};
// Every engine that launches plans, in table order (kIdeal excluded).
inline constexpr std::array<EngineId, 8> kLaunchEngines = {
    EngineId::kVllm,         EngineId::kSglang,       EngineId::kTrtllm,  EngineId::kDynamoVllm,
    EngineId::kDynamoSglang, EngineId::kDynamoTrtllm, EngineId::kMegatron, EngineId::kAtom};

// How far expert parallelism may span a stage.
enum class ExpertSpan : uint8_t {
  kAnyDivisor,   // any ep dividing G (expert TP G/ep over the rest)
  kOneOrStage,   // ep = 1 (experts tensor-parallel over G) or ep = G, nothing in between
  kOneOrStageWithDp,  // kAnyDivisor when dp = 1, kOneOrStage when dp > 1 (attention DP)
};
// How attention may split a stage of a MoE model when dp > 1 (dense models: dp is always
// independent replicas, any tp).
enum class AttentionSplit : uint8_t {
  kAny,                  // any tp x dp (attention TP inside attention-DP ranks)
  kTpOrDp,               // tp = G (all tensor-parallel) or tp = 1 (all data-parallel)
  kDpOnlyWithDenseFfn,   // any, except that a model with dense FFN layers needs tp = 1
};

struct Capabilities {
  EngineId id = EngineId::kIdeal;
  std::string_view name;     // "vllm", "dynamo+trtllm" (JSON, --engine)
  std::string_view title;    // "vLLM", "Dynamo + TensorRT-LLM"
  std::string_view version;  // the version the row describes, e.g. "0.11"
  EngineId workers = EngineId::kIdeal;  // the engine whose processes run the model (itself, or
                                        // Dynamo's backend); its command line is the workers'
  Engine scheduler = Engine::kIdeal;    // whose scheduler and limits the simulator follows
  // Degrees (every engine runs pipeline stages, pp > 1, and any tp dividing the heads).
  ExpertSpan expert_span = ExpertSpan::kAnyDivisor;
  AttentionSplit attention_split = AttentionSplit::kAny;
  bool dense_dp_replicas = true;        // a dense model's dp ranks are independent replicas
  // Layouts.
  bool per_operator_dims = true;        // false: Megatron's per-operator dims only
  bool sequence_parallel = true;        // residual stream split on tokens (sp = on)
  // Features.
  std::array<bool, 3> overlap{true, true, true};  // by Overlap: none, tbo, sbo
  bool tbo_needs_dp = false;            // tbo only with attention data parallelism (dp > 1)
  bool mtp = true;                      // MTP speculative decoding (mtp > 0)
  bool mtp_with_pp = true;              // ... also with pipeline stages (pp > 1)
  bool pp_with_dp = true;               // pipeline stages (pp > 1) also with dp > 1
  bool expert_slots = true;             // redundant expert slots (EPLB)
  bool disaggregation = true;           // prefill/decode pools
  bool prefill_pool_pp = true;          // ... whose prefill servers may run pipeline stages
  bool decode_pool_pp = true;           // ... and whose decode servers may
  bool chunked_prefill = true;
  // GPU vendors the engine runs on (hw.h Gpu::vendor): TensorRT-LLM and Dynamo are CUDA-only,
  // ATOM is ROCm-only, vLLM, SGLang and Megatron-LM have both builds.
  bool nvidia = true;
  bool amd = false;
  // A server spans at most one node (NVLink / xGMI domain): ATOM has no multi-node launch.
  bool single_node = false;
  // AMD's quantised all-reduce (QuickReduce) where the launch sets its environment variable
  // (SGLang: ROCM_QUICK_REDUCE_QUANTIZATION, vLLM: VLLM_ROCM_QUICK_REDUCE_QUANTIZATION);
  // --quick-reduce prices it for these engines only.
  bool quick_reduce = false;
  // Several instances behind the engine's own front end take requests in turn (Dynamo's frontend,
  // whose --router-mode defaults to round-robin) rather than by load (the least-loaded instance:
  // the SGLang router's load balancing, and the default of the request-level simulator).
  bool round_robin_router = false;
  std::string_view source;              // where the row's facts come from
};

// What a server of a plan does: serve on its own (aggregated), or prefill or decode in a
// disaggregated deployment (whose KV-cache transfer may limit its degrees).
enum class Role : uint8_t { kServer, kPrefillPool, kDecodePool };
// Whether a server of role `r` may run pipeline stages under `c` (always for kServer).
inline bool StagesAllowed(const Capabilities& c, Role r) {
  return r == Role::kServer || (r == Role::kPrefillPool ? c.prefill_pool_pp : c.decode_pool_pp);
}

// The whole table, kIdeal first then kLaunchEngines' order.
std::span<const Capabilities> CapabilityTable();
const Capabilities& CapabilitiesOf(EngineId id);

std::string_view EngineName(EngineId id);   // Capabilities::name
std::string_view EngineTitle(EngineId id);  // Capabilities::title
// Whether engine `c` runs on GPUs of `vendor` ("nvidia", "amd"); kIdeal runs everywhere.
bool RunsOn(const Capabilities& c, std::string_view vendor);
// OK when `id` runs on `vendor`'s GPUs, else InvalidArgument in one line naming the engine, the
// GPU and the engines that do run there, e.g. "TensorRT-LLM does not run on AMD GPUs (mi355x):
// the engines for them are vllm, sglang, megatron, atom".
Status CheckVendor(EngineId id, std::string_view vendor, std::string_view gpu_name);
// CheckVendor, and for a single_node engine a cluster of at most one domain of
// `gpus_per_domain` GPUs (InvalidArgument naming the limit otherwise).
Status CheckCluster(EngineId id, std::string_view vendor, std::string_view gpu_name, int num_gpus,
                    int gpus_per_domain);

// OK when l2s launches a disaggregated (prefill/decode) deployment of `id`
// (Capabilities::disaggregation), else InvalidArgument: "l2s launches no disaggregated ATOM
// deployment (its plans are aggregated; docs/PLAN.md "Engine rules")". Callers prefix what asked
// for one (--serving disagg, a cluster of GPU pools).
Status CheckDisaggregation(EngineId id);

// Whether the engine named `name` (as ParseEngineId reads it) hands requests to its instances in
// turn (Capabilities::round_robin_router); false for names it does not know.
bool RoundRobinFrontEnd(std::string_view name);

// "vllm", "vLLM 0.11", "sglang-0.5.4", "trtllm", "trt-llm", "TensorRT-LLM", "dynamo+trtllm"
// (also "dynamo-sglang", "dynamo+vLLM"), "megatron", "megatron-lm", "atom", "ATOM 0.1.3", "ideal",
// "none" -> the engine;
// anything else, or "", is InvalidArgument naming the accepted names.
StatusOr<EngineId> ParseEngineId(std::string_view name);

// A release named in an engine name, with the engine it follows: "trtllm-0.17" asks TensorRT-LLM
// for 0.17, "dynamo-0.5+sglang-0.5.4" Dynamo for 0.5 and SGLang for 0.5.4 ("vllm0.6" and
// "TensorRT-LLM v1.1" too; a release before any engine word is the named engine's). What --engine
// may ask for: each capability row describes its engine from the release its rules and launch
// flags were read from (Capabilities::version) on; an older release has other flags and limits.
// (Measured rows' labels name the release that was measured and are not checked.)
// OK when `name` (a name ParseEngineId reads) names no release, or only releases no older than
// the rows they follow (Dynamo's for a release after "dynamo", the backend's after the backend);
// else InvalidArgument in one line, e.g. "l2s plans TensorRT-LLM from release 1.1 on (...):
// 'trtllm-0.17' asks for 0.17".
Status CheckRelease(std::string_view name);

// The simulator's scheduler for the engine (Capabilities::scheduler); Megatron-LM has no serving
// scheduler of its own and follows kIdeal.
inline Engine SchedulerOf(EngineId id) { return CapabilitiesOf(id).scheduler; }
// The limits the engine applies when the user states none: the simulator's DefaultsOf for its
// scheduler (the CUDA-graph limit among them; the one source is sim/engine_figures.cc).
inline EngineDefaults DefaultsOfEngine(EngineId id) { return DefaultsOf(SchedulerOf(id)); }

}  // namespace l2s::engine
