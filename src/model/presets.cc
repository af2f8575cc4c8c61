// Built-in models. The released ones transcribe the HuggingFace config.json files kept in
// ../shared/models/hf (file named next to each preset); presets_test checks every preset against
// ParseHfConfig of its file so the two cannot drift. The two GPT-MoE models are SYNTHETIC: the
// paper (reference/PAPER.md, "Evaluation setup") evaluates "two synthetic GPT-style MoE models of
// 1.2T and 1.6T parameters" without giving their shapes; ours are GPT-3 175B layers (d_model 12288,
// 96 heads of 128, 4x FFN = 49152, vocab 51200 (GPT-3's 50257 padded to a multiple of 1024 as
// Megatron does), LayerNorm and biases everywhere, GELU MLP) with every FFN replaced by 16 experts
// (top-2), at 60 layers (1.20T) and 80 layers (1.59T). No released checkpoint has these shapes.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "model/hf_config.h"
#include "model/model_source.h"
#include "model/presets.h"

namespace l2s {
namespace {

// The released checkpoints' architectures[0] (their config.json files in ../shared/models/hf;
// DeepSeek-V4's from deepseek_v4_test's transcription); none for the synthetic GPT-MoE models.
std::string HfClassOf(std::string_view arch) {
  static constexpr std::pair<std::string_view, std::string_view> kClasses[] = {
      {"llama", "LlamaForCausalLM"},          {"mixtral", "MixtralForCausalLM"},
      {"qwen3", "Qwen3ForCausalLM"},          {"qwen3_moe", "Qwen3MoeForCausalLM"},
      {"deepseek_v3", "DeepseekV3ForCausalLM"}, {"kimi_k2", "DeepseekV3ForCausalLM"},
      {"gpt_oss", "GptOssForCausalLM"},        {"llama4", "Llama4ForConditionalGeneration"},
      {"deepseek_v4", "DeepseekV4ForCausalLM"},
  };
  for (const auto& [a, cls] : kClasses)
    if (a == arch) return std::string(cls);
  return "";
}

// Fields shared by every preset; all layers dense, full attention, GQA, gated FFN, bf16.
ModelSpec Base(std::string name, std::string arch, int layers, int64_t hidden, int64_t vocab,
               int heads, int kv_heads, int head_dim, int64_t max_context) {
  ModelSpec m;
  m.name = std::move(name);
  m.hf_class = HfClassOf(arch);
  m.architecture = std::move(arch);
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.vocab_size = vocab;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.max_context = max_context;
  m.layers.assign(layers, LayerSpec{});
  return m;
}

void SetExperts(ModelSpec* m, int experts, int top_k, int64_t expert_ffn) {
  m->num_experts = experts;
  m->experts_per_token = top_k;
  m->expert_ffn_size = expert_ffn;
}

// meta-llama--Meta-Llama-3.1-{8B,70B,405B}.json
ModelSpec Llama31(std::string name, int layers, int64_t hidden, int heads, int64_t ffn) {
  ModelSpec m = Base(std::move(name), "llama", layers, hidden, 128256, heads, 8, 128, 131072);
  m.dense_ffn_size = ffn;
  return m;
}

// mistralai--Mixtral-8x7B-v0.1.json, mistralai--Mixtral-8x22B-v0.1.json
ModelSpec Mixtral(std::string name, int layers, int64_t hidden, int heads, int64_t ffn,
                  int64_t max_context) {
  ModelSpec m = Base(std::move(name), "mixtral", layers, hidden, 32000, heads, 8, 128, max_context);
  SetExperts(&m, 8, 2, ffn);
  for (LayerSpec& l : m.layers) l.ffn = FfnKind::kMoe;
  return m;
}

// Qwen--Qwen3-32B.json
ModelSpec Qwen3_32B() {
  ModelSpec m = Base("qwen3-32b", "qwen3", 64, 5120, 151936, 64, 8, 128, 40960);
  m.qk_norm = true;
  m.dense_ffn_size = 25600;
  return m;
}

// Qwen--Qwen3-30B-A3B.json, Qwen--Qwen3-235B-A22B.json (decoder_sparse_step 1, no
// mlp_only_layers: every layer MoE; intermediate_size is given though no layer is dense).
ModelSpec Qwen3Moe(std::string name, int layers, int64_t hidden, int heads, int64_t dense_ffn,
                   int64_t expert_ffn) {
  ModelSpec m = Base(std::move(name), "qwen3_moe", layers, hidden, 151936, heads, 4, 128, 40960);
  m.qk_norm = true;
  m.dense_ffn_size = dense_ffn;
  SetExperts(&m, 128, 8, expert_ffn);
  for (LayerSpec& l : m.layers) l.ffn = FfnKind::kMoe;
  return m;
}

// deepseek-ai--DeepSeek-V3.json, moonshotai--Kimi-K2-Instruct.json: MLA, fp8 checkpoints,
// noaux_tc routing (router bias), one shared expert, the first `first_dense` layers dense.
ModelSpec DeepseekV3Like(std::string name, std::string arch, int heads, int64_t vocab,
                         int experts, int first_dense, int mtp, int64_t max_context) {
  ModelSpec m = Base(std::move(name), std::move(arch), 61, 7168, vocab, heads, heads, 128 + 64,
                     max_context);
  m.attention = AttentionKind::kMla;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.dense_ffn_size = 18432;
  SetExperts(&m, experts, 8, 2048);
  m.num_shared_experts = 1;
  m.shared_ffn_size = 2048;
  m.router_bias = true;
  for (int i = first_dense; i < m.num_layers; ++i) m.layers[i].ffn = FfnKind::kMoe;
  m.mtp_layers = mtp;
  m.weight_dtype = DType::kFP8;
  m.weight_block_scaled = true;  // quantization_config.weight_block_size [128, 128]
  return m;
}

// openai--gpt-oss-120b.json: even layers sliding (128), odd full; MXFP4 experts.
ModelSpec GptOss120B() {
  ModelSpec m = Base("gpt-oss-120b", "gpt_oss", 36, 2880, 201088, 64, 8, 64, 131072);
  m.attention_bias = true;
  m.attention_sinks = true;
  SetExperts(&m, 128, 4, 2880);
  m.expert_bias = true;
  m.router_bias = true;
  for (int i = 0; i < m.num_layers; ++i) {
    m.layers[i].ffn = FfnKind::kMoe;
    m.layers[i].window = i % 2 == 0 ? 128 : 0;
  }
  m.weight_dtype = DType::kFP4;
  m.attention_unquantized = true;
  return m;
}

// meta-llama--Llama-4-Maverick-17B-128E-Instruct.json (text_config): MoE on odd layers
// (interleave_moe_layer_step 2), one shared expert of intermediate_size, dense layers of
// intermediate_size_mlp. Chunked attention counted as full (see hf_config.cc).
ModelSpec Llama4Maverick() {
  ModelSpec m = Base("llama-4-maverick", "llama4", 48, 5120, 202048, 40, 8, 128, 1048576);
  m.vision_tower = true;  // Llama4ForConditionalGeneration: the text model of a multimodal one
  m.dense_ffn_size = 16384;
  SetExperts(&m, 128, 1, 8192);
  m.num_shared_experts = 1;
  m.shared_ffn_size = 8192;
  for (int i = 1; i < m.num_layers; i += 2) m.layers[i].ffn = FfnKind::kMoe;
  return m;
}

// DeepSeek-V4-Flash (deepseek-ai/DeepSeek-V4-Flash config.json; no copy in ../shared, so
// deepseek_v4_test parses a transcription of it and compares): hidden 4096, 43 layers, 64 heads,
// one KV head of head_dim 512 (qk_rope_head_dim 64), q_lora_rank 1024, o_lora_rank 1024 in 8
// groups, sliding_window 128, compress_ratios [0, 0] + [4, 128] x 20 + [4] (+ a 0 for the MTP
// layer), indexer 64 heads x 128 picking 512, hc_mult 4, 256 experts top-6 of 2048 + 1 shared,
// num_hash_layers 3, 1 MTP layer, vocab 129280, max_position_embeddings 1048576,
// quantization_config fp8 (its experts are fp4, expert_dtype, which l2s does not model apart).
// 284.3B parameters, 13.8B active (13.3B without the embedding table): "284B total, 13B
// activated" on the model card.
ModelSpec DeepseekV4Flash() {
  ModelSpec m = Base("deepseek-v4-flash", "deepseek_v4", 43, 4096, 129280, 64, 64, 512, 1048576);
  m.attention = AttentionKind::kMla;
  m.q_lora_rank = 1024;
  m.kv_lora_rank = 512 - 64;
  m.qk_nope_head_dim = 512 - 64;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 512;
  m.o_lora_rank = 1024;
  m.o_groups = 8;
  m.hc_mult = 4;
  m.attention_sinks = true;
  m.misc_params_per_layer = 2 * (24 * 4 * 4096 + 24 + 3);  // hyper-connection mixing, hc 4
  m.index_topk = 512;
  m.index_heads = 64;
  m.index_head_dim = 128;
  SetExperts(&m, 256, 6, 2048);
  m.num_shared_experts = 1;
  m.shared_ffn_size = 2048;
  m.router_bias = true;
  m.num_hash_layers = 3;
  m.mtp_layers = 1;
  m.mtp_shares_embeddings = true;
  m.weight_dtype = DType::kFP8;
  m.weight_block_scaled = true;  // quantization_config.weight_block_size [128, 128]
  for (int i = 0; i < m.num_layers; ++i) {
    LayerSpec& l = m.layers[i];
    l.ffn = FfnKind::kMoe;
    l.window = 128;
    l.compress_ratio = i < 2 ? 0 : (i % 2 == 0 ? 4 : 128);
    l.mixer = l.compress_ratio == 4 ? Mixer::kSparse : Mixer::kAttention;
  }
  return m;
}

// SYNTHETIC (see the top of this file): GPT-3-style MoE, MHA, non-gated GELU MLP, 16 experts
// top-2 in every layer, LayerNorm and biases, untied embeddings, bf16. max_context 0: the paper
// decodes these at 16k-64k contexts and states no limit.
ModelSpec GptMoe(std::string name, int layers) {
  ModelSpec m = Base(std::move(name), "gpt_moe", layers, 12288, 51200, 96, 96, 128, 0);
  m.synthetic = true;
  m.gated_ffn = false;
  m.attention_bias = true;
  m.layernorm_bias = true;
  SetExperts(&m, 16, 2, 49152);
  m.expert_bias = true;
  for (LayerSpec& l : m.layers) l.ffn = FfnKind::kMoe;
  return m;
}

using Maker = std::function<ModelSpec()>;

const std::vector<std::pair<std::string, Maker>>& Registry() {
  static const std::vector<std::pair<std::string, Maker>> kRegistry = {
      {"llama-3.1-8b", [] { return Llama31("llama-3.1-8b", 32, 4096, 32, 14336); }},
      {"llama-3.1-70b", [] { return Llama31("llama-3.1-70b", 80, 8192, 64, 28672); }},
      {"llama-3.1-405b", [] { return Llama31("llama-3.1-405b", 126, 16384, 128, 53248); }},
      {"mixtral-8x7b", [] { return Mixtral("mixtral-8x7b", 32, 4096, 32, 14336, 32768); }},
      {"mixtral-8x22b", [] { return Mixtral("mixtral-8x22b", 56, 6144, 48, 16384, 65536); }},
      {"qwen3-32b", [] { return Qwen3_32B(); }},
      {"qwen3-30b-a3b", [] { return Qwen3Moe("qwen3-30b-a3b", 48, 2048, 32, 6144, 768); }},
      {"qwen3-235b-a22b", [] { return Qwen3Moe("qwen3-235b-a22b", 94, 4096, 64, 12288, 1536); }},
      {"deepseek-v3",
       [] { return DeepseekV3Like("deepseek-v3", "deepseek_v3", 128, 129280, 256, 3, 1, 163840); }},
      {"kimi-k2",
       [] { return DeepseekV3Like("kimi-k2", "kimi_k2", 64, 163840, 384, 1, 0, 131072); }},
      {"gpt-oss-120b", [] { return GptOss120B(); }},
      {"llama-4-maverick", [] { return Llama4Maverick(); }},
      {"deepseek-v4-flash", [] { return DeepseekV4Flash(); }},
      {"gpt-moe-1.2t", [] { return GptMoe("gpt-moe-1.2t", 60); }},
      {"gpt-moe-1.6t", [] { return GptMoe("gpt-moe-1.6t", 80); }},
  };
  return kRegistry;
}

}  // namespace

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const auto& [name, make] : Registry()) names.push_back(name);
  return names;
}

StatusOr<ModelSpec> ModelPreset(std::string_view name) {
  for (const auto& [n, make] : Registry())
    if (n == name) return make();
  std::string list;
  for (const std::string& n : ModelPresetNames()) list += (list.empty() ? "" : ", ") + n;
  return Status::NotFound(fmt::format("unknown model preset \"{}\"; presets: {}", name, list));
}

StatusOr<ModelSpec> LoadModel(std::string_view name_or_path) {
  // Presets, paths and HuggingFace repo ids (model_source.h).
  return LoadModelFrom(name_or_path, DefaultModelSearchPaths(), nullptr);
}

}  // namespace l2s
