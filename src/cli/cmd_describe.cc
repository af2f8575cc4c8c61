// `l2s describe`: the derived figures of a model or a cluster.
//   l2s describe --model NAME_OR_PATH [--context C] [--json]
//   l2s describe --cluster PRESET_OR_FILE [--gpus N] [--json]
//   l2s describe --gpu h100 --gpus 64 [--gpus-per-node 8] [--json]
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "cli/problem_flags.h"
#include "common/dtype.h"
#include "hw/hw.h"
#include "model/counts.h"
#include "model/model_source.h"
#include "model/presets.h"
#include "sim/kernels.h"

namespace l2s::cli {
namespace {

struct DescribeFlags {
  std::string model;
  std::string cluster;
  std::string gpu;
  int gpus = 0;
  int gpus_per_node = 0;  // 0: the GPU's own NVLink domain
  int64_t context = 4096;
  bool json = false;
  std::string draft_model;  // --draft-model: show the draft l2s prices beside the model
};

int NumSlidingLayers(const ModelSpec& m) {
  int n = 0;
  for (const LayerSpec& l : m.layers) n += l.window > 0 ? 1 : 0;
  return n;
}

int MaxWindow(const ModelSpec& m) {
  int w = 0;
  for (const LayerSpec& l : m.layers) w = std::max(w, l.window);
  return w;
}

// Distinct layer shapes in order of first appearance, with their layer counts.
struct KindCount {
  LayerSpec layer;
  int count = 0;
};
std::vector<KindCount> LayerKinds(const ModelSpec& m) {
  std::vector<KindCount> out;
  for (const LayerSpec& l : m.layers) {
    auto it = std::find_if(out.begin(), out.end(), [&](const KindCount& k) { return k.layer == l; });
    if (it == out.end()) out.push_back({l, 1});
    else ++it->count;
  }
  return out;
}

// "attention", "sliding 1024", "sparse top-2048", "linear", "mamba2", "none".
std::string MixerLabel(const ModelSpec& m, const LayerSpec& l) {
  // DeepSeek-V4: "window 128", "window 128 + 4x top-512", "window 128 + 128x".
  if (m.compressed_kv() && l.mixer != Mixer::kNone) {
    if (l.compress_ratio == 0) return fmt::format("window {}", l.window);
    return fmt::format("window {} + {}x{}", l.window, l.compress_ratio,
                       l.mixer == Mixer::kSparse ? fmt::format(" top-{}", m.index_topk) : "");
  }
  switch (l.mixer) {
    case Mixer::kAttention:
      return l.window > 0 ? fmt::format("sliding {}", l.window)
                          : std::string(m.attention == AttentionKind::kMla ? "full (mla)" : "full");
    case Mixer::kSparse:
      return fmt::format("sparse top-{}{}", m.index_topk, l.shared_indexer ? " (shared idx)" : "");
    case Mixer::kLinear: return "linear (deltanet)";
    case Mixer::kMamba: return m.mamba_version == 1 ? "mamba" : "mamba2";
    case Mixer::kNone: return "none";
  }
  return "?";
}

// "dense 14336", "moe 128x704 top-8 +1 shared", "latent moe ...", "none".
std::string FfnLabel(const ModelSpec& m, const LayerSpec& l) {
  switch (l.ffn) {
    case FfnKind::kDense: return fmt::format("dense {}", m.ffn_size_of(l));
    case FfnKind::kMoe: {
      std::string s = fmt::format("{}moe {}x{} top-{}", m.moe_latent_size > 0 ? "latent " : "",
                                  m.num_experts, m.expert_ffn_size, m.experts_per_token);
      if (m.num_zero_experts > 0) s += fmt::format(" +{} zero", m.num_zero_experts);
      if (m.num_shared_experts > 0) s += fmt::format(" +{} shared", m.num_shared_experts);
      return s;
    }
    case FfnKind::kNone: return "none";
  }
  return "?";
}

nlohmann::ordered_json ModelJson(const ModelSpec& m, int64_t context) {
  const ParamCounts c = CountParams(m);
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["architecture"] = m.architecture;
  j["hf_class"] = m.hf_class;  // architectures[0]: the class the engines' registries look up
  j["synthetic"] = m.synthetic;
  j["num_layers"] = m.num_layers;
  j["num_dense_layers"] = m.num_dense_layers();
  j["num_moe_layers"] = m.num_moe_layers();
  j["num_sliding_layers"] = NumSlidingLayers(m);
  j["sliding_window"] = MaxWindow(m);
  j["hidden_size"] = m.hidden_size;
  j["vocab_size"] = m.vocab_size;
  j["tied_embeddings"] = m.tied_embeddings;
  j["max_context"] = m.max_context;
  j["attention"] = m.attention == AttentionKind::kMla ? "mla" : "gqa";
  j["num_heads"] = m.num_heads;
  j["num_kv_heads"] = m.num_kv_heads;
  j["head_dim"] = m.head_dim;
  if (m.attention == AttentionKind::kMla) {
    j["q_lora_rank"] = m.q_lora_rank;
    j["kv_lora_rank"] = m.kv_lora_rank;
    j["qk_nope_head_dim"] = m.qk_nope_head_dim;
    j["qk_rope_head_dim"] = m.qk_rope_head_dim;
    j["v_head_dim"] = m.v_head_dim;
  }
  j["gated_ffn"] = m.gated_ffn;
  j["dense_ffn_size"] = m.dense_ffn_size;
  j["num_experts"] = m.num_experts;
  j["experts_per_token"] = m.experts_per_token;
  j["expert_ffn_size"] = m.expert_ffn_size;
  j["num_shared_experts"] = m.num_shared_experts;
  j["shared_ffn_size"] = m.shared_ffn_size;
  j["weight_dtype"] = DTypeName(m.weight_dtype);
  j["attention_unquantized"] = m.attention_unquantized;
  j["total_params"] = c.total;
  j["active_params"] = c.active;
  j["params"] = {{"embedding", c.embedding},       {"lm_head", c.lm_head},
                 {"attention", c.attention},       {"dense_ffn", c.dense_ffn},
                 {"routed_experts", c.routed_experts}, {"shared_experts", c.shared_experts},
                 {"routers", c.routers},           {"norms", c.norms}};
  j["mtp_layers"] = m.mtp_layers;
  j["vision_tower_unmodelled"] = m.vision_tower;
  j["mtp_params"] = c.mtp;  // the MTP modules, or the draft model (draft_model)
  if (m.has_draft_model()) {
    j["draft_model"] = m.draft_model;
    j["draft_config"] = m.draft_config.empty() ? nlohmann::json() : nlohmann::json(m.draft_config);
  }
  j["weight_bytes"] = WeightBytes(m, m.weight_dtype);
  j["weight_bytes_bf16"] = WeightBytes(m, DType::kBF16);
  j["kv_bytes_per_token"] = KvBytesPerToken(m, DType::kBF16);
  j["kv_bytes_per_token_fp8"] = KvBytesPerToken(m, DType::kFP8);
  j["context"] = context;
  j["kv_bytes_per_sequence"] = KvBytesForSequence(m, DType::kBF16, context);
  j["state_bytes_per_sequence"] = StateBytesPerSequence(m);
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (const KindCount& k : LayerKinds(m)) {
    const LayerSpec& l = k.layer;
    nlohmann::ordered_json e;
    e["layers"] = k.count;
    e["mixer"] = MixerName(l.mixer);
    e["window"] = l.window;
    if (m.compressed_kv()) e["compress_ratio"] = l.compress_ratio;
    e["ffn"] = FfnKindName(l.ffn);
    if (l.mixer == Mixer::kAttention || l.mixer == Mixer::kSparse) {
      e["kv_heads"] = m.kv_heads_of(l);
      e["head_dim"] = m.head_dim_of(l);
    }
    if (l.ffn == FfnKind::kDense) e["ffn_size"] = m.ffn_size_of(l);
    e["params_per_layer"] = LayerParams(m, l);
    e["kv_bytes_per_token"] = KvBytesPerTokenOfLayer(m, l, DType::kBF16);
    e["state_bytes_per_sequence"] = StateBytesOfLayer(m, l);
    e["flops_per_token_decode"] = LayerFlopsPerToken(m, l, context, true);
    kinds.push_back(std::move(e));
  }
  j["layer_kinds"] = std::move(kinds);
  j["flops_per_token_decode"] = FlopsPerTokenDecode(m, context);
  j["flops_per_token_prefill"] = FlopsPerTokenPrefill(m, context);
  return j;
}

std::string Billions(int64_t n) { return fmt::format("{:.2f} B", static_cast<double>(n) / 1e9); }

void PrintModel(const ModelSpec& m, int64_t context) {
  const ParamCounts c = CountParams(m);
  auto row = [](const char* key, const std::string& value) {
    fmt::print("{:<22} {}\n", key, value);
  };
  row("model", fmt::format("{} ({}{})", m.name, m.architecture, m.synthetic ? ", synthetic" : ""));
  const std::string windows =
      NumSlidingLayers(m) > 0
          ? fmt::format("; {} sliding-window of {}", NumSlidingLayers(m), MaxWindow(m))
          : "";
  row("layers", fmt::format("{} ({} dense, {} MoE{})", m.num_layers, m.num_dense_layers(),
                            m.num_moe_layers(), windows));
  // Per kind: KV bytes per token of one layer, and per sequence at `context` the KV and the
  // fixed recurrent state of all the kind's layers.
  const std::vector<KindCount> kinds = LayerKinds(m);
  fmt::print("{:<22} {:>6}  {:<22} {:<42} {:>10} {:>10} {:>12} {:>12}\n", "layer kinds", "layers",
             "mixer", "ffn", "params/lyr", "KV B/tok", "KV MiB/seq", "state MiB/seq");
  for (const KindCount& k : kinds) {
    const LayerSpec& l = k.layer;
    fmt::print("{:<22} {:>6}  {:<22} {:<42} {:>9.3f}B {:>10.0f} {:>12.1f} {:>12.1f}\n", "",
               k.count, MixerLabel(m, l), FfnLabel(m, l),
               static_cast<double>(LayerParams(m, l)) / 1e9,
               KvBytesPerTokenOfLayer(m, l, DType::kBF16),
               k.count * KvBytesOfLayerForSequence(m, l, DType::kBF16, context) /
                   (1024.0 * 1024.0),
               k.count * StateBytesOfLayer(m, l) / (1024.0 * 1024.0));
  }
  row("hidden / vocab", fmt::format("{} / {}{}", m.hidden_size, m.vocab_size,
                                    m.tied_embeddings ? " (tied)" : ""));
  if (m.compressed_kv()) {
    row("attention",
        fmt::format("DeepSeek-V4, {} heads x {} over one shared KV vector (rope {}), q_lora {}, "
                    "o_lora {} x {} groups; indexer {} x {} top-{}; hc_mult {}; {} hash-routed",
                    m.num_heads, m.head_dim, m.qk_rope_head_dim, m.q_lora_rank, m.o_lora_rank,
                    m.o_groups, m.index_heads, m.index_head_dim, m.index_topk, m.hc_mult,
                    m.num_hash_layers));
  } else if (m.attention == AttentionKind::kMla) {
    row("attention", fmt::format("MLA, {} heads, q_lora {}, kv_lora {}, qk {}+{}, v {}",
                                 m.num_heads, m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim,
                                 m.qk_rope_head_dim, m.v_head_dim));
  } else {
    row("attention", fmt::format("GQA, {} heads, {} kv heads, head_dim {}", m.num_heads,
                                 m.num_kv_heads, m.head_dim));
  }
  std::string ffn = m.num_dense_layers() > 0
                        ? fmt::format("dense {}{}", m.dense_ffn_size, m.gated_ffn ? " (gated)" : "")
                        : std::string(m.gated_ffn ? "gated" : "GELU");
  if (m.is_moe()) {
    ffn += fmt::format("; {} experts x {}, top-{}", m.num_experts, m.expert_ffn_size,
                       m.experts_per_token);
    if (m.num_shared_experts > 0)
      ffn += fmt::format(", {} shared x {}", m.num_shared_experts, m.shared_ffn_size);
  }
  row("ffn", ffn);
  row("max context", m.max_context > 0 ? std::to_string(m.max_context) : "unspecified");
  if (m.vision_tower)
    row("vision tower", "not modelled: the counts below are the language model's");
  row("params total", Billions(c.total));
  row("params active", Billions(c.active));
  row("  embedding+lm_head", Billions(c.embedding + c.lm_head));
  row("  attention", Billions(c.attention));
  if (c.dense_ffn > 0) row("  dense ffn", Billions(c.dense_ffn));
  if (c.routed_experts > 0) row("  routed experts", Billions(c.routed_experts));
  if (c.shared_experts > 0) row("  shared experts", Billions(c.shared_experts));
  if (m.mtp_layers > 0) row("mtp (not in total)", Billions(c.mtp));
  if (m.has_draft_model())
    row("draft (not in total)",
        fmt::format("{} as l2s prices {} (an EAGLE-3 draft: fc, one dense layer{}, a {}-token LM "
                    "head; {:.2f} GiB in bf16)",
                    Billions(c.mtp), m.draft_model,
                    m.draft_config.empty()
                        ? std::string(" of the model's shape: no config of it found locally")
                        : fmt::format(" of {} heads / {} KV x {}, FFN {}, from {}", m.draft_heads,
                                      m.draft_kv_heads, m.draft_head_dim, m.draft_ffn,
                                      m.draft_config),
                    DraftVocabOf(m), 2.0 * static_cast<double>(c.mtp) / kGiB));
  row("weights", fmt::format("{:.1f} GiB as {}{} ({:.1f} GiB bf16)",
                             WeightBytes(m, m.weight_dtype) / kGiB, DTypeName(m.weight_dtype),
                             m.attention_unquantized ? ", attention bf16" : "",
                             WeightBytes(m, DType::kBF16) / kGiB));
  row("kv / token (bf16)", fmt::format("{:.0f} B", KvBytesPerToken(m, DType::kBF16)));
  row(fmt::format("kv @ {} (bf16)", context).c_str(),
      fmt::format("{:.3f} GiB per sequence", KvBytesForSequence(m, DType::kBF16, context) / kGiB));
  if (StateBytesPerSequence(m) > 0)
    row("recurrent state", fmt::format("{:.3f} GiB per sequence (fixed, bf16)",
                                       StateBytesPerSequence(m) / kGiB));
  row(fmt::format("flops/token @ {}", context).c_str(),
      fmt::format("decode {:.2f} GFLOP, prefill {:.2f} GFLOP",
                  FlopsPerTokenDecode(m, context) / 1e9, FlopsPerTokenPrefill(m, context) / 1e9));
}

nlohmann::ordered_json ClusterJson(const ClusterSpec& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["gpu"] = {{"name", c.gpu.name},
              {"bf16_tflops", c.gpu.bf16_flops / 1e12},
              {"fp8_tflops", c.gpu.fp8_flops / 1e12},
              {"hbm_gib", c.gpu.hbm_bytes / kGiB},
              {"hbm_tbps", c.gpu.hbm_bw / 1e12},
              {"nvlink_gbps", c.gpu.nvlink_bw / 1e9},
              {"calibration", c.gpu.calibration},
              {"fp4_tflops", c.gpu.fp4_flops / 1e12},
              {"mesh_link_gbps", c.gpu.mesh_link_bw / 1e9},
              {"tdp_w", c.gpu.tdp_w},
              {"calibration_note", CalibrationNote(c.gpu)}};
  j["num_gpus"] = c.num_gpus;
  j["gpus_per_domain"] = c.gpus_per_domain;
  j["gpus_per_host"] = HostGpus(c);
  j["num_domains"] = c.num_domains();
  j["scaleout_gbps_per_gpu"] = c.scaleout_bw / 1e9;
  j["nvlink_latency_us"] = c.nvlink_latency * 1e6;
  j["scaleout_latency_us"] = c.scaleout_latency * 1e6;
  j["total_hbm_gib"] = c.gpu.hbm_bytes * c.num_gpus / kGiB;
  j["total_bf16_pflops"] = c.gpu.bf16_flops * c.num_gpus / 1e15;
  return j;
}

void PrintCluster(const ClusterSpec& c) {
  auto row = [](const char* key, const std::string& value) {
    fmt::print("{:<22} {}\n", key, value);
  };
  row("cluster", c.name);
  row("gpu", fmt::format("{}: {:.0f} / {:.0f} TFLOPS bf16 / fp8, {:.0f} GiB HBM at {:.2f} TB/s",
                         c.gpu.name, c.gpu.bf16_flops / 1e12, c.gpu.fp8_flops / 1e12,
                         c.gpu.hbm_bytes / kGiB, c.gpu.hbm_bw / 1e12));
  row("calibration", CalibrationNote(c.gpu));
  if (c.gpu.fp4_flops > 0) row("fp4", fmt::format("{:.0f} TFLOPS dense", c.gpu.fp4_flops / 1e12));
  if (c.gpu.tdp_w > 0) row("power", fmt::format("{:.0f} W board (TDP)", c.gpu.tdp_w));
  row("gpus", fmt::format("{} in {} {} domain(s) of {}{}", c.num_gpus, c.num_domains(),
                          ScaleUpName(c.gpu), c.gpus_per_domain,
                          HostGpus(c) < c.gpus_per_domain
                              ? fmt::format(", hosts (compute trays) of {}", HostGpus(c))
                              : ""));
  if (c.gpu.mesh_link_bw > 0)
    row("node fabric", fmt::format("point-to-point mesh (no switch): {:.1f} GB/s per link per "
                                   "direction, {:.0f} GB/s per GPU over all links; a group of k "
                                   "GPUs uses its k-1 links, {:.1f} us",
                                   c.gpu.mesh_link_bw / 1e9, c.gpu.nvlink_bw / 1e9,
                                   c.nvlink_latency * 1e6));
  else
    row("nvlink", fmt::format("{:.0f} GB/s per GPU per direction, {:.1f} us", c.gpu.nvlink_bw / 1e9,
                              c.nvlink_latency * 1e6));
  row("scale-out", fmt::format("{:.0f} GB/s per GPU per direction, {:.1f} us", c.scaleout_bw / 1e9,
                               c.scaleout_latency * 1e6));
  row("total", fmt::format("{:.0f} GiB HBM, {:.2f} PFLOPS bf16",
                           c.gpu.hbm_bytes * c.num_gpus / kGiB,
                           c.gpu.bf16_flops * c.num_gpus / 1e15));
}

int Run(const DescribeFlags& f) {
  const bool want_cluster = !f.cluster.empty() || !f.gpu.empty();
  if (f.model.empty() == !want_cluster)
    return Fail(std::string("describe: give either --model or --cluster / --gpu"));
  if (!f.model.empty()) {
    if (f.gpus != 0) return Fail(std::string("describe: --gpus goes with --cluster or --gpu"));
    if (f.context <= 0)
      return Fail(fmt::format("--context: expected a positive number of tokens, got {}",
                              f.context));
    StatusOr<ModelSpec> m = LoadModelWithWarnings(f.model);
    if (!m.ok()) return Fail(m.status());
    if (!f.draft_model.empty())
      if (Status st = AttachDraftModelFrom(f.draft_model, DefaultModelSearchPaths(), &*m);
          !st.ok())
        return Fail(st);
    if (f.json) {
      fmt::print("{}\n", DumpJson(ModelJson(*m, f.context)));
    } else {
      PrintModel(*m, f.context);
    }
    return kExitOk;
  }
  if (!f.cluster.empty() && !f.gpu.empty())
    return Fail(std::string("describe: --cluster and --gpu are exclusive"));
  if (f.gpus < 0) return Fail(fmt::format("--gpus: expected a positive integer, got {}", f.gpus));
  StatusOr<ClusterSpec> c =
      !f.cluster.empty() ? LoadCluster(f.cluster)
                         : MakeCluster(f.gpu,
                                       f.gpus > 0                ? f.gpus
                                       : f.gpus_per_node > 0     ? f.gpus_per_node
                                                                 : DefaultGpusPerDomain(f.gpu),
                                       f.gpus_per_node);
  if (c.ok() && !f.cluster.empty() && f.gpus > 0) c = ResizeCluster(*c, f.gpus);
  if (!c.ok()) return Fail(c.status());
  if (f.json) {
    fmt::print("{}\n", DumpJson(ClusterJson(*c)));
  } else {
    PrintCluster(*c);
  }
  return kExitOk;
}

}  // namespace

Runner RegisterDescribe(CLI::App& app) {
  auto f = std::make_shared<DescribeFlags>();
  CLI::App* cmd = app.add_subcommand("describe", "Print the derived figures of a model or cluster");
  cmd->add_option("--model", f->model, "model preset or path to a HuggingFace config.json");
  cmd->add_option("--draft-model", f->draft_model,
                  "with --model: the EAGLE-3 draft model l2s prices beside it (its parameters)");
  cmd->add_option("--cluster", f->cluster, "cluster preset (gb200-nvl72, h100-64, ...) or JSON file");
  cmd->add_option("--gpu", f->gpu, fmt::format("GPU type for a plain cluster: {}",
                                               fmt::join(GpuPresetNames(), ", ")));
  cmd->add_option("--gpus", f->gpus, "number of GPUs (resizes --cluster)")
      ->check(CountRange(kMaxGpusFlag));
  cmd->add_option("--gpus-per-node", f->gpus_per_node,
                  "GPUs per NVLink domain with --gpu (default: the GPU's, 8 on HGX nodes, 72 on "
                  "GB200/GB300)")
      ->check(CountRange(kMaxGpusPerNode));
  cmd->add_option("--context", f->context, "context length for KV and FLOP figures (4096)")
      ->check(CountRange(kMaxTokens));
  cmd->add_flag("--json", f->json, "print JSON instead of a table");
  return [f] { return Run(*f); };
}

}  // namespace l2s::cli
