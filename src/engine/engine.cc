#include "engine/engine.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace l2s::engine {
namespace {

constexpr std::array<bool, 3> kAllOverlaps{true, true, true};
constexpr std::array<bool, 3> kTboOnly{true, true, false};
constexpr std::array<bool, 3> kNoOverlap{true, false, false};

// Shared by an engine's own row and its Dynamo row (Dynamo's workers are the engine's own
// processes: python -m dynamo.vllm / dynamo.sglang / dynamo.trtllm take the engine's arguments).
Capabilities Vllm() {
  Capabilities c;
  c.version = "0.11";
  c.workers = EngineId::kVllm;
  c.scheduler = Engine::kVllm;
  // docs.vllm.ai serving/data_parallel_deployment: "The expert layers will by default form a
  // (DP x TP) sized tensor parallel group. To enable expert parallelism, include the
  // --enable-expert-parallel CLI arg"; "Data Parallel attention can be combined with Tensor
  // Parallel attention"; dense models: DP ranks are separate engine replicas.
  c.expert_span = ExpertSpan::kOneOrStage;
  c.attention_split = AttentionSplit::kAny;
  c.per_operator_dims = false;
  c.sequence_parallel = false;
  // vllm/config/parallel.py: enable_dbo (dual-batch overlap = two-batch), enable_eplb with
  // eplb_config.num_redundant_experts; no single-batch overlap.
  c.overlap = kTboOnly;
  // docs/design/dbo.md: --enable-dbo "must be run in conjunction with --data-parallel-size N
  // where N is greater than 1 and --enable-expert-parallel".
  c.tbo_needs_dp = true;
  c.mtp = true;  // speculative_config method "deepseek_mtp"
  // Not with pipeline stages: the MTP draft model (vllm/model_executor/models/deepseek_mtp.py)
  // does not implement SupportsPP, and the draft's parallel config copies the target's
  // pipeline_parallel_size, so `--pipeline-parallel-size 2 --speculative-config
  // '{"method":"deepseek_mtp",...}'` stops in config validation ("Pipeline parallelism is not
  // supported for this model"; vllm-project/vllm issues 14117, 52069).
  c.mtp_with_pp = false;
  c.expert_slots = true;
  c.disaggregation = true;   // --kv-transfer-config (P/D connectors)
  // Pools without pipeline stages: the NIXL connector's default (pull) mode refuses a pipeline-
  // parallel producer at the handshake ("NixlConnector received pp_rank > 0 handshake metadata
  // but does not support PP-disaggregated KV transfer") and a pipeline-parallel consumer in its
  // worker's constructor (vllm-project/vllm issues 40674, 52913; pull-mode support is PR 53360,
  // open). Dynamo's vLLM workers use the same connector.
  c.prefill_pool_pp = false;
  c.decode_pool_pp = false;
  c.chunked_prefill = true;  // V1 scheduler: chunked prefill always on (max_num_batched_tokens)
  c.amd = true;              // docs.vllm.ai getting_started/installation/gpu: ROCm build
  c.quick_reduce = true;     // vllm/envs.py VLLM_ROCM_QUICK_REDUCE_QUANTIZATION
  c.source =
      "docs.vllm.ai serving/data_parallel_deployment and expert_parallel_deployment; "
      "vllm/config/parallel.py (enable_expert_parallel, enable_eplb, enable_dbo); "
      "docs/design/dbo.md";
  return c;
}

Capabilities Sglang() {
  Capabilities c;
  c.version = "0.5";
  c.workers = EngineId::kSglang;
  c.scheduler = Engine::kSglang;
  // python/sglang/srt/layers/dp_attention.py compute_dp_attention_world_info: with
  // --enable-dp-attention, attn_tp_size = tp_size // dp_size (attention TP inside DP ranks);
  // --ep-size any divisor of --tp (MoE TP = tp_size / ep_size), but with DP attention the expert
  // layers move tokens with an all-to-all (--moe-a2a-backend deepep, or mori on ROCm), and
  // server_args.py _handle_a2a_moe sets "self.ep_size = self.tp_size" for it ("DeepEP MoE is
  // enabled. The expert parallel size is adjusted to be the same as the tensor parallel size"):
  // ep = 1 or all of --tp (= G) when dp > 1.
  c.expert_span = ExpertSpan::kOneOrStageWithDp;
  // python/sglang/srt/layers/dp_attention.py require_attn_tp_gather: "assert
  // server_args.moe_dense_tp_size in [1, None]": dense FFN layers run over all --tp GPUs or
  // unsharded per GPU, never over an attention-TP group of 1 < tp < G.
  c.attention_split = AttentionSplit::kDpOnlyWithDenseFfn;
  c.per_operator_dims = false;
  c.sequence_parallel = false;
  // python/sglang/srt/server_args.py: --enable-two-batch-overlap, --enable-single-batch-overlap,
  // --enable-eplb --ep-num-redundant-experts, --speculative-algorithm, --disaggregation-mode,
  // --chunked-prefill-size.
  c.overlap = kAllOverlaps;
  // Two-batch overlap runs on DeepEP's all-to-all, which an instance without DP attention does
  // not use (its MoE layers end in one all-reduce: docs/dev/COST_MODEL.md "Tensor-parallel MoE").
  c.tbo_needs_dp = true;
  c.mtp = true;
  // python/sglang/srt/server_args.py check_server_args: "if self.pp_size > 1: assert
  // self.disable_overlap_schedule and self.speculative_algorithm is None, 'Pipeline parallelism
  // is not compatible with overlap schedule, speculative decoding'".
  c.mtp_with_pp = false;
  c.expert_slots = true;
  c.disaggregation = true;
  // A prefill server may run pipeline stages (sgl-project/sglang PR 8846, "Support PD
  // disaggregation with Prefill PP", August 2025). A decode server may only since PRs 14265 and
  // 14945 (December 2025: "decode pp size should be equal to prefill pp size or 1"); before them
  // its event loop had none (issue 8424). l2s plans decode servers at pp = 1, which every 0.5
  // release launches, rather than pairing the two sides' stages.
  c.decode_pool_pp = false;
  c.chunked_prefill = true;
  c.amd = true;  // docs.sglang.ai platforms/amd_gpu: ROCm images (lmsysorg/sglang:*-rocm*)
  // python/sglang/srt/distributed/device_communicators/quick_all_reduce.py reads
  // ROCM_QUICK_REDUCE_QUANTIZATION.
  c.quick_reduce = true;
  c.source =
      "python/sglang/srt/layers/dp_attention.py (compute_dp_attention_world_info, "
      "moe_dense_tp_size in [1, None]); python/sglang/srt/server_args.py";
  return c;
}

Capabilities Trtllm() {
  Capabilities c;
  c.version = "1.1";
  c.workers = EngineId::kTrtllm;
  c.scheduler = Engine::kTrtllm;
  // nvidia.github.io/TensorRT-LLM features/parallel-strategy: attention is tensor-parallel or
  // data-parallel (enable_attention_dp) over tensor_parallel_size; MoE: moe_expert_parallel_size
  // x moe_tensor_parallel_size = tensor_parallel_size. Dynamo's TRT-LLM page: "--enable-
  // attention-dp sets attention_dp_size = tensor_parallel_size".
  c.expert_span = ExpertSpan::kAnyDivisor;
  c.attention_split = AttentionSplit::kTpOrDp;
  c.per_operator_dims = false;
  c.sequence_parallel = false;
  // LLM API: speculative_config decoding_type MTP; moe_config.load_balancer.num_slots;
  // cache_transceiver_config (disaggregated serving); enable_chunked_prefill. No switch that
  // overlaps the MoE all-to-all with compute.
  c.overlap = kNoOverlap;
  c.mtp = true;
  // Also with pipeline stages: MTP runs inside the model's forward (one-model MTP, as the launch
  // writes it), and tensorrt_llm/_torch/pyexecutor/py_executor.py refuses the pipeline executor
  // loop only to a separate drafter ("Drafting is not supported for selected executor loop.
  // Please disable disagg/pipeline parallelism scheduler": two-model and n-gram drafting).
  c.mtp_with_pp = true;
  c.expert_slots = true;
  c.disaggregation = true;
  c.chunked_prefill = true;
  c.source =
      "nvidia.github.io/TensorRT-LLM features/parallel-strategy; tensorrt_llm/llmapi/llm_args.py "
      "(enable_attention_dp, moe_expert_parallel_size, speculative_config MTP, moe_config)";
  return c;
}

// AMD's ATOM (AiTer Optimized Model, ROCm only): a vLLM-style engine (continuous batching with
// chunked prefill, max_num_seqs / max_num_batched_tokens, lockstep data-parallel engine cores;
// the simulator runs vLLM's scheduler for it, with the limits the launch command states) with
// vLLM's features (atom/model_engine/arg_utils.py: --enable-tbo [prefill|all], two-batch overlap
// of the MoRI all-to-all; --method mtp --num-speculative-tokens; --eplb-enable --eplb-config
// num_redundant_experts; no single-batch overlap) but its own degree rules, read from its code
// (github.com/ROCm/ATOM @ ffdf3bb, the flags fixture's commit):
//   - MoE layers span data-parallel ranks only under --enable-dp-attention, which runs attention
//     on every GPU of --tensor-parallel-size as its own rank (engine_core_mgr.py CoreManager:
//     data_parallel_size = tp x dp, tensor_parallel_size = 1); without it each -dp rank is a
//     separate replica for the MoE layers too (atom/model_ops/moe.py FusedMoEParallelConfig.make:
//     "Only flatten DP into TP/EP when enable_dp_attention is True. Otherwise, use pure DP for
//     MoE"). So a MoE stage runs attention all-TP (tp = G) or all-DP (tp = 1), as TensorRT-LLM;
//     experts over all G GPUs, tensor-parallel (ep = 1) or with --enable-expert-parallel (ep = G).
//   - No pipeline stages with data parallelism: CoreManager asserts "Pipeline parallel combined
//     with data parallel is not supported yet" (and "Pipeline parallel + DP-attention is not
//     supported yet").
//   - Speculation with pipeline stages only drafts for a decode node (scheduler.py
//     spec_decode_local = use_spec and pp_size == 1): no MTP with pp > 1, as vLLM.
// Unlike vLLM also: AMD GPUs only; one node (one CoreManager starts the engine cores on the local
// GPUs, no node-rank argument); its own prefill/decode mode (--kv-transfer-config, the atomesh
// router) is not emitted by l2s, so its plans are aggregated (docs/PLAN.md "Engine rules").
Capabilities Atom() {
  Capabilities c = Vllm();
  c.id = EngineId::kAtom;
  c.name = "atom";
  c.title = "ATOM";
  c.version = "0.1";
  c.workers = EngineId::kAtom;
  c.attention_split = AttentionSplit::kTpOrDp;
  c.pp_with_dp = false;
  c.disaggregation = false;
  c.nvidia = false;
  c.amd = true;
  c.single_node = true;
  c.quick_reduce = false;  // no QuickReduce environment variable in its launch
  c.source =
      "github.com/ROCm/ATOM: atom/model_engine/arg_utils.py (--enable-dp-attention, "
      "--enable-expert-parallel, --enable-tbo, --method mtp, --eplb-enable), "
      "atom/model_engine/engine_core_mgr.py (CoreManager), atom/model_ops/moe.py "
      "(FusedMoEParallelConfig.make)";
  return c;
}

Capabilities Dynamo(EngineId id, Capabilities backend, std::string_view name,
                    std::string_view title) {
  Capabilities c = backend;
  c.id = id;
  c.name = name;
  c.title = title;
  c.version = "0.6";  // Dynamo's; the workers are the backend row's version
  c.disaggregation = true;
  c.round_robin_router = true;  // dynamo.frontend --router-mode: round-robin unless kv is asked for
  c.nvidia = true;  // docs.nvidia.com/dynamo support matrix: CUDA only
  c.amd = false;
  c.quick_reduce = false;  // an AMD mechanism
  c.source = "docs.nvidia.com/dynamo backends (vllm, sglang, trtllm): workers take the engine's own "
             "arguments";
  return c;
}

Capabilities Megatron() {
  Capabilities c;
  c.id = EngineId::kMegatron;
  c.name = "megatron";
  c.title = "Megatron-LM";
  c.version = "core 0.14";
  c.workers = EngineId::kMegatron;
  c.scheduler = Engine::kIdeal;  // no serving scheduler: its inference loop takes the batch
  // megatron/core/transformer/moe/README.md "MoE Parallel Folding": attention TP x DP and
  // experts ETP x EP fold over the same GPUs (--expert-tensor-parallel-size); data parallel size
  // = world / (tp * pp).
  c.expert_span = ExpertSpan::kAnyDivisor;
  c.attention_split = AttentionSplit::kAny;
  c.per_operator_dims = false;    // its own layouts are Megatron's dims
  c.sequence_parallel = true;     // --sequence-parallel
  c.overlap = kNoOverlap;
  c.mtp = false;                  // no MTP speculative decoding in its inference engine
  c.expert_slots = false;
  c.disaggregation = false;
  c.chunked_prefill = false;
  c.amd = true;  // github.com/ROCm/Megatron-LM: AMD's ROCm port, the same arguments
  c.source = "megatron/core/transformer/moe/README.md; megatron/training/arguments.py";
  return c;
}

Capabilities Ideal() {
  Capabilities c;
  c.id = EngineId::kIdeal;
  c.name = "ideal";
  c.title = "ideal (no engine)";
  c.version = "-";
  c.source = "the paper's full space: every per-operator layout, no engine limits";
  c.amd = true;
  return c;
}

std::array<Capabilities, 9> BuildTable() {
  Capabilities v = Vllm(), s = Sglang(), t = Trtllm();
  v.id = EngineId::kVllm;
  v.name = "vllm";
  v.title = "vLLM";
  s.id = EngineId::kSglang;
  s.name = "sglang";
  s.title = "SGLang";
  t.id = EngineId::kTrtllm;
  t.name = "trtllm";
  t.title = "TensorRT-LLM";
  return {Ideal(),
          v,
          s,
          t,
          Dynamo(EngineId::kDynamoVllm, v, "dynamo+vllm", "Dynamo + vLLM"),
          Dynamo(EngineId::kDynamoSglang, s, "dynamo+sglang", "Dynamo + SGLang"),
          Dynamo(EngineId::kDynamoTrtllm, t, "dynamo+trtllm", "Dynamo + TensorRT-LLM"),
          Megatron(),
          Atom()};
}

const std::array<Capabilities, 9>& Table() {
  static const std::array<Capabilities, 9> table = BuildTable();
  return table;
}

// The numbers of a release from its first digit on: "v0.11.2" -> {0, 11, 2}, "core 0.14" ->
// {0, 14}; empty for none ("-").
std::vector<int> ReleaseNumbers(std::string_view s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  while (i < s.size()) {
    int n = 0;
    bool any = false;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      n = std::min(n * 10 + (s[i] - '0'), 1000000);
      any = true;
    }
    if (!any) break;
    out.push_back(n);
    if (i < s.size() && s[i] == '.') ++i;
    else break;
  }
  return out;
}

// Whether release `a` precedes `b` (missing numbers are 0: "1.1" = "1.1.0").
bool Precedes(const std::vector<int>& a, const std::vector<int>& b) {
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const int x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y;
  }
  return false;
}

}  // namespace

std::span<const Capabilities> CapabilityTable() { return Table(); }

Status CheckRelease(std::string_view name) {
  const StatusOr<EngineId> named = ParseEngineId(name);
  if (!named.ok()) return named.status();
  // The label's words in order (sim's EngineNameWords); each release checked against the row of
  // the engine word before it, the named engine's before any.
  const Capabilities* row = &CapabilitiesOf(*named);
  std::string_view row_title = row->title;
  for (const EngineNameWord& w : EngineNameWords(name)) {
    if (ParseEngineName(w.word).dynamo) {
      row = &CapabilitiesOf(*named);  // the Dynamo row of the named pair (version: Dynamo's)
      row_title = "Dynamo";
    } else if (StatusOr<EngineId> e = ParseEngineId(w.word); e.ok() && *e != EngineId::kIdeal) {
      row = &CapabilitiesOf(*e);
      row_title = row->title;
    }
    const std::vector<int> asked = ReleaseNumbers(w.release), from = ReleaseNumbers(row->version);
    if (asked.empty() || from.empty() || !Precedes(asked, from)) continue;
    const std::string from_text = fmt::format("{}", fmt::join(from, "."));
    return Status::InvalidArgument(fmt::format(
        "l2s plans {} from release {} on (its capability row: the rules and launch flags read "
        "from that release; docs/PLAN.md \"Engine rules\"); '{}' asks for {}: name release {} "
        "or later, or none",
        row_title, from_text, name, fmt::join(asked, "."), from_text));
  }
  return Status::Ok();
}

const Capabilities& CapabilitiesOf(EngineId id) {
  for (const Capabilities& c : Table())
    if (c.id == id) return c;
  return Table()[0];
}

std::string_view EngineName(EngineId id) { return CapabilitiesOf(id).name; }
std::string_view EngineTitle(EngineId id) { return CapabilitiesOf(id).title; }

bool RunsOn(const Capabilities& c, std::string_view vendor) {
  return vendor == "amd" ? c.amd : c.nvidia;
}

Status CheckVendor(EngineId id, std::string_view vendor, std::string_view gpu_name) {
  const Capabilities& c = CapabilitiesOf(id);
  if (RunsOn(c, vendor)) return Status::Ok();
  std::string names;
  for (EngineId e : kLaunchEngines)
    if (RunsOn(CapabilitiesOf(e), vendor))
      names += (names.empty() ? "" : ", ") + std::string(EngineName(e));
  return Status::InvalidArgument(fmt::format(
      "{} does not run on {} GPUs ({}): the engines for them are {}", c.title,
      vendor == "amd" ? "AMD" : "NVIDIA", gpu_name, names));
}

Status CheckCluster(EngineId id, std::string_view vendor, std::string_view gpu_name, int num_gpus,
                    int gpus_per_domain) {
  if (Status v = CheckVendor(id, vendor, gpu_name); !v.ok()) return v;
  const Capabilities& c = CapabilitiesOf(id);
  if (c.single_node && gpus_per_domain > 0 && num_gpus > gpus_per_domain)
    return Status::InvalidArgument(fmt::format(
        "{} serves from one node: plan instances of at most {} GPUs (one node of {}; plan "
        "--instance-gpus {} replicates one behind a router), or a multi-node instance with "
        "another engine (got {} GPUs)",
        c.title, gpus_per_domain, gpu_name, gpus_per_domain, num_gpus));
  return Status::Ok();
}

Status CheckDisaggregation(EngineId id) {
  const Capabilities& c = CapabilitiesOf(id);
  if (c.disaggregation) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "l2s launches no disaggregated {} deployment (its plans are aggregated; docs/PLAN.md "
      "\"Engine rules\")",
      c.title));
}

bool RoundRobinFrontEnd(std::string_view name) {
  const StatusOr<EngineId> id = ParseEngineId(name);
  return id.ok() && CapabilitiesOf(*id).round_robin_router;
}

StatusOr<EngineId> ParseEngineId(std::string_view name) {
  // One reading of engine labels for the simulator, validate and --engine (sim/simulator.h).
  const EngineNameParts n = ParseEngineName(name);
  const std::string& f = n.family;
  if (n.dynamo) {
    // A Dynamo front end in front of a backend: "dynamo+trtllm", "dynamo-sglang", "Dynamo
    // (vLLM)".
    if (f == "vllm") return EngineId::kDynamoVllm;
    if (f == "sglang") return EngineId::kDynamoSglang;
    if (f == "trtllm") return EngineId::kDynamoTrtllm;
  } else {
    if (f == "vllm") return EngineId::kVllm;
    if (f == "sglang") return EngineId::kSglang;
    if (f == "trtllm") return EngineId::kTrtllm;
    if (f == "megatron") return EngineId::kMegatron;
    if (f == "atom") return EngineId::kAtom;
    if (f.empty() && n.ideal) return EngineId::kIdeal;  // "ideal", "none"
  }
  std::string names;
  for (const Capabilities& c : Table()) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return Status::InvalidArgument(
      fmt::format("unknown engine '{}' (expected one of: {})", name, names));
}

}  // namespace l2s::engine
