// HuggingFace config.json -> ModelSpec.
//
// Supported model_type values and what is read from each (field names as in the HF configs):
//   llama, mistral, qwen2, qwen3   dense GQA; mistral: sliding_window on every layer;
//                                  qwen2/qwen3: use_sliding_window + max_window_layers or
//                                  layer_types; qwen2: q/k/v biases; qwen3: q/k RMSNorm
//   mixtral                        every layer MoE: num_local_experts, intermediate_size per expert
//   qwen3_moe                      num_experts, moe_intermediate_size; a layer is MoE unless it is
//                                  in mlp_only_layers or (layer+1) % decoder_sparse_step != 0
//   deepseek_v3, kimi_k2           MLA (q_lora_rank, kv_lora_rank, qk_*_head_dim, v_head_dim);
//                                  layer i is MoE iff i >= first_k_dense_replace and
//                                  i % moe_layer_freq == 0; n_shared_experts of
//                                  moe_intermediate_size; num_nextn_predict_layers -> mtp_layers
//   gpt_oss                        layer_types (sliding/full) with sliding_window, attention
//                                  biases and sinks, experts with biases, router bias
//   llama4                         fields under text_config; layer i is MoE iff
//                                  (i+1) % interleave_moe_layer_step == 0 (or listed in
//                                  moe_layers); one shared expert of intermediate_size; dense
//                                  layers use intermediate_size_mlp. Chunked attention
//                                  (attention_chunk_size) is treated as full attention: l2s
//                                  budgets KV for every layer at the full context, which over-
//                                  states Llama 4's KV (3 of 4 layers keep at most one chunk).
//   deepseek_v32, glm_moe_dsa      DeepSeek-V3 layout with DeepSeek Sparse Attention on every
//                                  layer (index_topk, index_n_heads, index_head_dim; glm:
//                                  mlp_layer_types, indexer_types)
//   glm4_moe                       GQA + q/k/v biases, use_qk_norm, DeepSeek-style MoE layout
//   minimax_m2                     GQA, q/k norm over all heads, every layer MoE, routing bias
//   qwen3_next                     layer_types / full_attention_interval: gated DeltaNet linear
//                                  attention + gated full attention; qwen3_moe FFNs + shared
//   gemma2, gemma3(_text), gemma4(_text)  sandwich norms, layer_types / sliding_window_pattern;
//                                  gemma4: global_head_dim, attention_k_eq_v, enable_moe_block
//   phi3                           llama layout (fused projections), sliding_window
//   jamba                          attention every attn_layer_period (Mamba v1 otherwise), MoE
//                                  every expert_layer_period
//   nemotron_h                     hybrid_override_pattern / layers_block_type: Mamba2, attention,
//                                  relu2 MLP, (latent) MoE blocks
//   nemotron-nas                   DeciLM block_configs: per-layer KV heads, FFN width, no-ops
//   longcat_flash                  MLA, two sublayers per block, zero-computation experts
//   bailing_moe(_v2)               Ling: fused qkv, first_k_dense_replace, shared experts
//   deepseek_v4                    one shared 512-wide KV head (head_dim, qk_rope_head_dim),
//                                  q_lora_rank, grouped low-rank output (o_lora_rank, o_groups),
//                                  per-layer compress_ratios with sliding_window, an indexer on
//                                  ratio-4 layers (index_*), hc_mult hyper-connections, every
//                                  layer MoE (n_routed_experts, n_shared_experts,
//                                  moe_intermediate_size), num_hash_layers, MTP
//   deepseek_v2, glm4_moe_lite     as deepseek_v3 (DeepSeek-V2 / V2.5 / V2-Lite, GLM-4.7-Flash)
//   qwen2_moe                      qwen2 attention, the qwen3_moe layout, one gated shared expert
//                                  (shared_expert_intermediate_size)
//   olmoe, olmo2, olmo3            q/k norm over all heads; olmoe: every layer MoE (num_experts
//                                  of intermediate_size); olmo3: layer_types + sliding_window
//   phimoe                         mixtral layout, LayerNorm with biases, attention_bias
//   granite, smollm3               llama shapes
//   granitemoe(shared)             every layer MoE (num_local_experts of intermediate_size),
//                                  shared_intermediate_size
//   ernie4_5(_moe)                 use_bias, tied by default; moe_layer_start_index /
//                                  end_index / interval, moe_num_experts, moe_k,
//                                  moe_num_shared_experts
//   glm, glm4                      llama shapes, q/k/v biases (attention_bias, default true);
//                                  glm4: a norm after each sublayer too
//   seed_oss                       attention_bias (q/k/v), attention_out_bias, mlp_bias
//   cohere, cohere2                tied by default; cohere: use_qk_norm; cohere2: layer_types or
//                                  sliding_window_pattern (4) over sliding_window (4096)
//   dots1                          qwen3 attention, deepseek_v3 MoE layout (first_k_dense_replace)
//   qwen3_5(_moe)(_text)           Qwen3.5 / 3.6: as qwen3_next (MoE when num_experts > 0, else
//                                  dense), mtp_num_hidden_layers MTP layers
//   granitemoehybrid               Granite 4.0: layer_types mamba / attention, Mamba2 (mamba_*),
//                                  MoE + a shared MLP (shared_intermediate_size) in every layer
//   wrappers: llama4, gemma3, gemma4, kimi_k25, qwen3_5, qwen3_5_moe, qwen2_vl, qwen2_5_vl,
//                                  qwen3_vl, qwen3_vl_moe, mistral3, llava, llava_next: the
//                                  language model under text_config (its model_type names the
//                                  family; the Qwen3.5 and Qwen2(.5)-VL wrappers may keep it at
//                                  the top level); the vision tower is not modelled
// Each family's reader below states what it reads. Config JSON may contain NaN / Infinity
// tokens (Python's json writes them); see jsonio::Parse.
// quantization_config.quant_method: fp8 / fbgemm_fp8 -> weight_dtype fp8; mxfp4 -> fp4;
// modelopt (quant_algo FP8* / NVFP4* / MXFP4) and compressed-tensors (config_groups of 8- or
// 4-bit float weights) -> fp8 / fp4; modules_to_not_convert / ignore naming self_attn ->
// attention_unquantized (attention, router, embeddings and lm_head stay bf16). Any other method,
// and integer weights, are Unsupported. torch_dtype is not read: weights are
// bf16 unless quantization_config says otherwise (float16/float32 checkpoints are served in 2-byte
// formats too).
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "model/hf_config.h"
#include "model/json_fields.h"

namespace l2s {
namespace {

using nlohmann::json;
using jsonio::ObjectReader;
using L = ModelLimits;

enum class Family { kLlama, kMistral, kMixtral, kQwen2, kQwen3, kQwen3Moe, kDeepseekV3,
                    kGptOss, kLlama4, kDeepseekV32, kGlm4Moe, kGlmMoeDsa, kMinimaxM2, kQwen3Next,
                    kGemma2, kGemma3, kGemma4, kPhi3, kJamba, kNemotronH, kDeciLm, kLongcatFlash,
                    kBailingMoe, kBailingMoeV2, kDeepseekV4, kQwen2Moe, kOlmoe, kOlmo2,
                    kPhiMoe, kGraniteMoe, kErnie, kErnieMoe, kGlm, kGlm4, kSeedOss, kCohere,
                    kCohere2, kDots1, kGraniteMoeHybrid, kQwen35 };

struct FamilyName {
  const char* model_type;
  Family family;
};
constexpr std::array<FamilyName, 49> kFamilies = {{
    {"llama", Family::kLlama},
    {"mistral", Family::kMistral},
    {"mixtral", Family::kMixtral},
    {"qwen2", Family::kQwen2},
    {"qwen3", Family::kQwen3},
    {"qwen3_moe", Family::kQwen3Moe},
    {"deepseek_v3", Family::kDeepseekV3},
    {"kimi_k2", Family::kDeepseekV3},  // Kimi K2 is the DeepSeek-V3 architecture
    {"gpt_oss", Family::kGptOss},
    {"llama4_text", Family::kLlama4},  // the text tower's own config (fields at the top level)
    {"deepseek_v32", Family::kDeepseekV32},
    {"glm4_moe", Family::kGlm4Moe},
    {"glm_moe_dsa", Family::kGlmMoeDsa},
    {"minimax_m2", Family::kMinimaxM2},
    {"qwen3_next", Family::kQwen3Next},
    {"gemma2", Family::kGemma2},
    {"gemma3_text", Family::kGemma3},
    {"gemma4_text", Family::kGemma4},
    {"phi3", Family::kPhi3},
    {"jamba", Family::kJamba},
    {"nemotron_h", Family::kNemotronH},
    {"nemotron-nas", Family::kDeciLm},
    {"longcat_flash", Family::kLongcatFlash},
    {"bailing_moe", Family::kBailingMoe},
    {"bailing_moe_v2", Family::kBailingMoeV2},
    {"deepseek_v4", Family::kDeepseekV4},
    {"deepseek_v2", Family::kDeepseekV3},  // DeepSeek-V2 / V2.5 / V2-Lite: V3's fields and layout
    {"glm4_moe_lite", Family::kDeepseekV3},  // GLM-4.7-Flash: MLA and V3's MoE fields
    {"qwen2_moe", Family::kQwen2Moe},
    {"olmoe", Family::kOlmoe},
    {"olmo2", Family::kOlmo2},
    {"olmo3", Family::kOlmo2},
    {"phimoe", Family::kPhiMoe},
    {"granite", Family::kLlama},  // Granite 3 dense: llama shapes (attention_bias, mlp_bias)
    {"granitemoe", Family::kGraniteMoe},
    {"granitemoeshared", Family::kGraniteMoe},
    {"smollm3", Family::kLlama},  // llama shapes; no_rope_layers changes no weight
    {"ernie4_5", Family::kErnie},
    {"ernie4_5_moe", Family::kErnieMoe},
    {"qwen3_vl_moe_text", Family::kQwen3Moe},  // the text tower's own config
    {"glm", Family::kGlm},
    {"glm4", Family::kGlm4},
    {"seed_oss", Family::kSeedOss},
    {"cohere", Family::kCohere},
    {"cohere2", Family::kCohere2},
    {"dots1", Family::kDots1},
    {"granitemoehybrid", Family::kGraniteMoeHybrid},
    {"qwen3_5_text", Family::kQwen35},
    {"qwen3_5_moe_text", Family::kQwen35},
}};

// Multimodal wrappers whose language model is a family above, under text_config (whose own
// model_type names the family; `text_default` when it has none). The vision tower is not
// modelled. Qwen3.5 configs, and Qwen2-VL / Qwen2.5-VL ones written before text_config existed,
// may keep the language model's fields at the top level (`top_level`).
struct Wrapper {
  const char* model_type;
  const char* text_default;
  bool top_level;
};
constexpr std::array<Wrapper, 13> kWrappers = {{
    {"llama4", "llama4_text", false},
    {"gemma3", "gemma3_text", false},
    {"gemma4", "gemma4_text", false},
    {"kimi_k25", "kimi_k2", false},  // Kimi K2.5 / K2.6: DeepSeek-V3 text tower + vision
    {"qwen3_5", "qwen3_5_text", true},
    {"qwen3_5_moe", "qwen3_5_text", true},
    {"qwen2_vl", "qwen2", true},
    {"qwen2_5_vl", "qwen2", true},
    {"qwen3_vl", "qwen3", false},
    {"qwen3_vl_moe", "qwen3_vl_moe_text", false},
    {"mistral3", "mistral", false},
    {"llava", "llama", false},
    {"llava_next", "llama", false},
}};

// Text-tower model_types that are a family above under another name.
struct Alias {
  const char* model_type;
  const char* family_type;
};
constexpr std::array<Alias, 3> kTextAliases = {{
    {"qwen2_vl_text", "qwen2"},
    {"qwen2_5_vl_text", "qwen2"},
    {"qwen3_vl_text", "qwen3"},
}};

std::string SupportedList() {
  std::string s;
  for (const FamilyName& f : kFamilies) {
    if (!s.empty()) s += ", ";
    s += f.model_type;
  }
  s += "; multimodal wrappers (text model only): ";
  for (size_t i = 0; i < kWrappers.size(); ++i)
    s += (i > 0 ? ", " : "") + std::string(kWrappers[i].model_type);
  return s;
}

const FamilyName* FindFamily(std::string_view model_type) {
  for (const Alias& a : kTextAliases)
    if (model_type == a.model_type) model_type = a.family_type;
  for (const FamilyName& f : kFamilies)
    if (model_type == f.model_type) return &f;
  return nullptr;
}

const Wrapper* FindWrapper(std::string_view model_type) {
  for (const Wrapper& w : kWrappers)
    if (model_type == w.model_type) return &w;
  return nullptr;
}

// Reads a list of layer indices (e.g. mlp_only_layers) into a per-layer flag.
Status ReadLayerIndexList(const ObjectReader& r, std::string_view key, int num_layers,
                          std::vector<bool>* flags) {
  flags->assign(num_layers, false);
  const json* v = r.Find(key);
  if (v == nullptr) return Status::Ok();
  const std::string what = fmt::format("a list of layer indices in [0, {}]", num_layers - 1);
  if (!v->is_array()) return r.Error(key, what, v);
  for (const json& e : *v) {
    if (!e.is_number_integer()) return r.Error(key, what, &e);
    int64_t i = e.get<int64_t>();
    if (i < 0 || i >= num_layers) return r.Error(key, what, &e);
    (*flags)[static_cast<size_t>(i)] = true;
  }
  return Status::Ok();
}

// layer_types: ["sliding_attention" | "full_attention" | "chunked_attention", ...], one per
// layer. Sliding layers get `window` (which must then be positive).
Status ReadLayerTypes(const ObjectReader& r, const json& types, int64_t window, ModelSpec* m) {
  const std::string what =
      fmt::format("a list of {} of \"full_attention\" / \"sliding_attention\"", m->num_layers);
  if (!types.is_array() || types.size() != static_cast<size_t>(m->num_layers))
    return r.Error("layer_types", what, &types);
  for (size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    if (!t.is_string()) return r.Error("layer_types", what, &t);
    const std::string& s = t.get_ref<const std::string&>();
    if (s == "sliding_attention") {
      if (window <= 0)
        return r.ErrorMsg("sliding_window",
                          "expected a positive integer when layer_types has sliding layers");
      m->layers[i].window = static_cast<int>(window);
    } else if (s == "full_attention" || s == "chunked_attention") {
      m->layers[i].window = 0;  // chunked attention is budgeted as full (see top of file)
    } else {
      return r.Error("layer_types", what, &t);
    }
  }
  return Status::Ok();
}

// Fields every family has: sizes, attention heads, embeddings.
// `layers_key` names the layer count (LongCat: num_layers, whose blocks hold `per_block` layers
// each); when it is absent and `derived_layers` > 0 (Nemotron-H: the length of
// layers_block_type), that count is used.
Status ReadCommon(const ObjectReader& r, ModelSpec* m,
                  std::string_view layers_key = "num_hidden_layers", int per_block = 1,
                  int64_t derived_layers = 0) {
  int64_t layers = derived_layers;
  if (r.Has(layers_key) || derived_layers <= 0) {
    L2S_ASSIGN_OR_RETURN(layers, r.Int(layers_key, 1, L::kMaxLayers / per_block));
  }
  layers *= per_block;
  L2S_ASSIGN_OR_RETURN(m->hidden_size, r.Int("hidden_size", 1, L::kMaxHidden));
  L2S_ASSIGN_OR_RETURN(m->vocab_size, r.Int("vocab_size", 1, L::kMaxVocab));
  L2S_ASSIGN_OR_RETURN(int64_t heads, r.Int("num_attention_heads", 1, L::kMaxHeads));
  L2S_ASSIGN_OR_RETURN(int64_t kv, r.IntOr("num_key_value_heads", heads, 1, heads));
  L2S_ASSIGN_OR_RETURN(m->tied_embeddings, r.BoolOr("tie_word_embeddings", false));
  L2S_ASSIGN_OR_RETURN(m->max_context,
                       r.IntOr("max_position_embeddings", 0, 0, int64_t{1} << 40));
  m->num_layers = static_cast<int>(layers);
  m->num_heads = static_cast<int>(heads);
  m->num_kv_heads = static_cast<int>(kv);
  m->layers.assign(m->num_layers, LayerSpec{});
  return Status::Ok();
}

// GQA head geometry: kv heads divide heads; head_dim defaults to hidden / heads.
// A sliding window that may be absent or null (= none) but, when given, must be positive.
StatusOr<int64_t> ReadWindowOr(const ObjectReader& r, std::string_view key) {
  return r.IntOr(key, 0, 1, L::kMaxWindow);
}

Status ReadGqaHeads(const ObjectReader& r, ModelSpec* m) {
  m->attention = AttentionKind::kGqa;
  if (m->num_heads % m->num_kv_heads != 0)
    return r.Error("num_key_value_heads",
                   fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                   r.Find("num_key_value_heads"));
  if (r.Has("head_dim")) {
    L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("head_dim", 1, L::kMaxHeadDim));
    m->head_dim = static_cast<int>(hd);
  } else {
    if (m->hidden_size % m->num_heads != 0)
      return r.Error("num_attention_heads",
                     fmt::format("a divisor of hidden_size ({}) when head_dim is absent",
                                 m->hidden_size),
                     r.Find("num_attention_heads"));
    const int64_t hd = m->hidden_size / m->num_heads;
    if (hd > L::kMaxHeadDim)
      return r.Error("num_attention_heads",
                     fmt::format("at least hidden_size / {} when head_dim is absent",
                                 L::kMaxHeadDim),
                     r.Find("num_attention_heads"));
    m->head_dim = static_cast<int>(hd);
  }
  return Status::Ok();
}

// GQA heads and attention_bias (biases on q/k/v and o), as most families read them.
Status ReadGqaAndBias(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  return Status::Ok();
}

// Qwen2/Qwen3: layer_types if present, else sliding layers are those >= max_window_layers when
// use_sliding_window is true (HF Qwen2Config / Qwen3Config).
Status ReadQwenWindows(const ObjectReader& r, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(bool use_sw, r.BoolOr("use_sliding_window", false));
  int64_t window = 0;
  if (use_sw) {
    L2S_ASSIGN_OR_RETURN(window, r.Int("sliding_window", 1, L::kMaxWindow));
  }
  if (const json* types = r.Find("layer_types")) return ReadLayerTypes(r, *types, window, m);
  if (!use_sw) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t max_window_layers,
                       r.IntOr("max_window_layers", 28, 0, L::kMaxLayers));
  for (int i = static_cast<int>(max_window_layers); i < m->num_layers; ++i)
    m->layers[i].window = static_cast<int>(window);
  return Status::Ok();
}

// Routed-expert count, top-k and expert FFN width under the family's field names.
Status ReadExperts(const ObjectReader& r, std::string_view experts_key,
                   std::string_view topk_key, std::string_view ffn_key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t e, r.Int(experts_key, 1, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(int64_t k, r.Int(topk_key, 1, e));
  L2S_ASSIGN_OR_RETURN(m->expert_ffn_size, r.Int(ffn_key, 1, L::kMaxFfn));
  m->num_experts = static_cast<int>(e);
  m->experts_per_token = static_cast<int>(k);
  return Status::Ok();
}

// intermediate size of the dense layers, required only when the model has dense layers.
Status ReadDenseFfn(const ObjectReader& r, std::string_view key, ModelSpec* m) {
  if (m->num_dense_layers() == 0 && !r.Has(key)) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int(key, 1, L::kMaxFfn));
  return Status::Ok();
}

// intermediate_size of the dense layers and num_nextn_predict_layers MTP modules (DeepSeek-V3
// and the families that copy its layout).
Status ReadDenseFfnAndMtp(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("num_nextn_predict_layers", 0, 0, L::kMaxMtpLayers));
  m->mtp_layers = static_cast<int>(mtp);
  return Status::Ok();
}

void SetAllMoe(ModelSpec* m) {
  for (LayerSpec& l : m->layers) l.ffn = FfnKind::kMoe;
}

Status ReadLlamaLike(const ObjectReader& r, Family f, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  if (f == Family::kLlama) {
    L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  } else if (f == Family::kMistral) {
    L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
    for (LayerSpec& l : m->layers) l.window = static_cast<int>(w);
  } else if (f == Family::kQwen2) {
    m->qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o without
    L2S_RETURN_IF_ERROR(ReadQwenWindows(r, m));
  } else {  // qwen3
    L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
    m->qk_norm = true;
    L2S_RETURN_IF_ERROR(ReadQwenWindows(r, m));
  }
  return Status::Ok();
}

Status ReadMixtral(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
  SetAllMoe(m);
  L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
  for (LayerSpec& l : m->layers) l.window = static_cast<int>(w);
  return Status::Ok();
}

// The Qwen MoE layout (Qwen2-MoE, Qwen3-MoE, Qwen3-Next, Qwen3-VL-MoE): num_experts of
// moe_intermediate_size, top num_experts_per_tok; a layer is MoE unless it is in mlp_only_layers
// or (layer+1) % decoder_sparse_step != 0, dense layers use intermediate_size. With
// `gated_shared`, shared_expert_intermediate_size > 0 adds one shared expert of that width behind
// a sigmoid gate (shared_expert_gate, [1, hidden]).
Status ReadQwenSparseLayout(const ObjectReader& r, bool gated_shared, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t step, r.IntOr("decoder_sparse_step", 1, 1, L::kMaxLayers));
  std::vector<bool> mlp_only;
  L2S_RETURN_IF_ERROR(ReadLayerIndexList(r, "mlp_only_layers", m->num_layers, &mlp_only));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = !mlp_only[i] && (i + 1) % step == 0 ? FfnKind::kMoe : FfnKind::kDense;
  if (gated_shared) {
    L2S_ASSIGN_OR_RETURN(int64_t shared,
                         r.IntOr("shared_expert_intermediate_size", 0, 0, L::kMaxFfn));
    m->num_shared_experts = shared > 0 ? 1 : 0;
    m->shared_ffn_size = shared;
    if (shared > 0) m->misc_params_per_moe_layer = m->hidden_size;  // shared_expert_gate
  }
  return ReadDenseFfn(r, "intermediate_size", m);
}

Status ReadQwen3Moe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = true;
  L2S_RETURN_IF_ERROR(ReadQwenSparseLayout(r, /*gated_shared=*/false, m));
  return ReadQwenWindows(r, m);
}

// MLA attention fields (DeepSeek-V3 and the families that reuse its attention).
Status ReadMla(const ObjectReader& r, ModelSpec* m) {
  m->attention = AttentionKind::kMla;
  m->num_kv_heads = m->num_heads;  // MLA decompresses K/V per head; num_key_value_heads unused
  L2S_ASSIGN_OR_RETURN(int64_t q_lora, r.IntOr("q_lora_rank", 0, 0, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t kv_lora, r.Int("kv_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t nope, r.Int("qk_nope_head_dim", 0, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t rope, r.Int("qk_rope_head_dim", 0, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t v_dim, r.Int("v_head_dim", 1, L::kMaxHeadDim));
  if (nope + rope <= 0 || nope + rope > L::kMaxHeadDim)
    return r.Error("qk_nope_head_dim",
                   fmt::format("qk_nope_head_dim + qk_rope_head_dim in [1, {}]", L::kMaxHeadDim),
                   r.Find("qk_nope_head_dim"));
  m->q_lora_rank = static_cast<int>(q_lora);
  m->kv_lora_rank = static_cast<int>(kv_lora);
  m->qk_nope_head_dim = static_cast<int>(nope);
  m->qk_rope_head_dim = static_cast<int>(rope);
  m->v_head_dim = static_cast<int>(v_dim);
  m->head_dim = static_cast<int>(nope + rope);
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  return Status::Ok();
}

Status ReadDeepseekV3(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadMla(r, m));

  L2S_ASSIGN_OR_RETURN(int64_t routed, r.IntOr("n_routed_experts", 0, 0, L::kMaxExperts));
  if (routed > 0) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
    L2S_ASSIGN_OR_RETURN(int64_t shared,
                         r.IntOr("n_shared_experts", 0, 0, L::kMaxSharedExperts));
    m->num_shared_experts = static_cast<int>(shared);
    m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
    L2S_ASSIGN_OR_RETURN(int64_t first_dense,
                         r.IntOr("first_k_dense_replace", 0, 0, m->num_layers));
    L2S_ASSIGN_OR_RETURN(int64_t freq, r.IntOr("moe_layer_freq", 1, 1, L::kMaxLayers));
    for (int i = 0; i < m->num_layers; ++i) {
      const bool moe = i >= first_dense && i % freq == 0;
      m->layers[i].ffn = moe ? FfnKind::kMoe : FfnKind::kDense;
    }
    // noaux_tc routing adds a per-expert score-correction bias to the router (DeepSeek-V3).
    L2S_ASSIGN_OR_RETURN(std::string topk_method, r.StringOr("topk_method", "greedy"));
    m->router_bias = topk_method == "noaux_tc";
  }
  return ReadDenseFfnAndMtp(r, m);
}

Status ReadGptOss(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", true));
  m->attention_sinks = true;
  m->expert_bias = true;
  m->router_bias = true;
  // Top-k is "experts_per_token" in gpt-oss configs; newer ones also write num_experts_per_tok.
  const char* topk_key = r.Has("experts_per_token") ? "experts_per_token" : "num_experts_per_tok";
  L2S_RETURN_IF_ERROR(ReadExperts(r, "num_local_experts", topk_key, "intermediate_size", m));
  if (r.Has("experts_per_token") && r.Has("num_experts_per_tok")) {
    L2S_ASSIGN_OR_RETURN(int64_t k2, r.Int("num_experts_per_tok", 1, m->num_experts));
    if (k2 != m->experts_per_token)
      return r.Error("num_experts_per_tok",
                     fmt::format("the same value as experts_per_token ({})",
                                 m->experts_per_token),
                     r.Find("num_experts_per_tok"));
  }
  SetAllMoe(m);
  L2S_ASSIGN_OR_RETURN(int64_t window, r.IntOr("sliding_window", 128, 1, L::kMaxWindow));
  if (const json* types = r.Find("layer_types")) return ReadLayerTypes(r, *types, window, m);
  // GptOssConfig default: even layers sliding, odd layers full.
  for (int i = 0; i < m->num_layers; ++i) m->layers[i].window = i % 2 == 0 ? int(window) : 0;
  return Status::Ok();
}

Status ReadLlama4(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
  m->num_shared_experts = 1;
  m->shared_ffn_size = m->expert_ffn_size;
  if (r.Has("moe_layers")) {
    std::vector<bool> moe;
    L2S_RETURN_IF_ERROR(ReadLayerIndexList(r, "moe_layers", m->num_layers, &moe));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].ffn = moe[i] ? FfnKind::kMoe : FfnKind::kDense;
  } else {
    L2S_ASSIGN_OR_RETURN(int64_t step,
                         r.IntOr("interleave_moe_layer_step", 1, 1, L::kMaxLayers));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].ffn = (i + 1) % step == 0 ? FfnKind::kMoe : FfnKind::kDense;
  }
  return ReadDenseFfn(r, "intermediate_size_mlp", m);
}

// ---------------------------------------------------------------------------------------------
// Families with per-layer kinds (hybrid, sparse, heterogeneous). See the table at the top.

// A per-layer list of strings (layer_types, mlp_layer_types, layers_block_type, ...): one entry
// per layer, each one of `allowed`; returns the index into `allowed` per layer.
Status ReadLayerStrings(const ObjectReader& r, std::string_view key, int num_layers,
                        std::initializer_list<std::string_view> allowed, std::vector<int>* out) {
  std::string names;
  for (std::string_view a : allowed) names += fmt::format("{}\"{}\"", names.empty() ? "" : " / ", a);
  const std::string what = fmt::format("a list of {} of {}", num_layers, names);
  const json* v = r.Find(key);
  if (v == nullptr) return r.Error(key, what, nullptr);
  if (!v->is_array()) return r.Error(key, what, v);
  if (v->size() != static_cast<size_t>(num_layers))
    return r.ErrorMsg(key, fmt::format("expected {} entries (one per layer, num_hidden_layers), "
                                       "got {}", num_layers, v->size()));
  out->assign(num_layers, 0);
  for (int i = 0; i < num_layers; ++i) {
    const json& e = (*v)[static_cast<size_t>(i)];
    int found = -1;
    if (e.is_string()) {
      int j = 0;
      for (std::string_view a : allowed) {
        if (e.get_ref<const std::string&>() == a) found = j;
        ++j;
      }
    }
    if (found < 0) return r.Error(key, what, &e);
    (*out)[static_cast<size_t>(i)] = found;
  }
  return Status::Ok();
}

// DeepSeek Sparse Attention (deepseek_v32, glm_moe_dsa): every layer sparse, indexer fields with
// the defaults of the family's HF config class. `indexer_types` (GLM-5.x, optional): per layer
// "full" (own indexer) or "shared" (reuses the previous indexer's top-k).
Status ReadSparseAttention(const ObjectReader& r, int64_t heads_default, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t topk, r.IntOr("index_topk", 2048, 1, L::kMaxWindow));
  L2S_ASSIGN_OR_RETURN(int64_t ih, r.IntOr("index_n_heads", heads_default, 1, L::kMaxHeads));
  L2S_ASSIGN_OR_RETURN(int64_t ihd, r.IntOr("index_head_dim", 128, 1, L::kMaxHeadDim));
  m->index_topk = static_cast<int>(topk);
  m->index_heads = static_cast<int>(ih);
  m->index_head_dim = static_cast<int>(ihd);
  std::vector<int> types(m->num_layers, 0);
  if (r.Has("indexer_types"))
    L2S_RETURN_IF_ERROR(
        ReadLayerStrings(r, "indexer_types", m->num_layers, {"full", "shared"}, &types));
  for (int i = 0; i < m->num_layers; ++i) {
    m->layers[i].mixer = Mixer::kSparse;
    m->layers[i].shared_indexer = types[i] == 1;
  }
  if (m->num_layers > 0 && m->layers[0].shared_indexer)
    return r.ErrorMsg("indexer_types", "expected \"full\" for layer 0 (a shared indexer reuses "
                                       "an earlier layer's)");
  return Status::Ok();
}

// mlp_layer_types ("dense" / "sparse" per layer) when present, else the DeepSeek rule
// (first_k_dense_replace dense layers, then MoE every moe_layer_freq).
Status ReadMlpLayerTypes(const ObjectReader& r, ModelSpec* m) {
  if (!r.Has("mlp_layer_types")) return Status::Ok();
  std::vector<int> t;
  L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "mlp_layer_types", m->num_layers, {"dense", "sparse"}, &t));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = t[i] == 1 ? FfnKind::kMoe : FfnKind::kDense;
  return ReadDenseFfn(r, "intermediate_size", m);
}

Status ReadDeepseekV32(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadDeepseekV3(r, m));
  L2S_RETURN_IF_ERROR(ReadMlpLayerTypes(r, m));
  return ReadSparseAttention(r, 64, m);  // DeepseekV32Config: index_n_heads 64
}

// GLM-5 (GlmMoeDsaConfig): DeepSeek-V3.2 layout (MLA + DSA), GLM router (always a score
// correction bias), index_n_heads default 32.
Status ReadGlmMoeDsa(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadDeepseekV3(r, m));
  if (m->is_moe() && !r.Has("mlp_layer_types") && !r.Has("first_k_dense_replace")) {
    // GlmMoeDsaConfig's default mlp_layer_types: the first 3 layers dense.
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].ffn = i < 3 ? FfnKind::kDense : FfnKind::kMoe;
    L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  }
  L2S_RETURN_IF_ERROR(ReadMlpLayerTypes(r, m));
  if (m->is_moe()) m->router_bias = true;
  return ReadSparseAttention(r, 32, m);
}

// DeepSeek-style MoE layout of GLM-4.x and Ling: `shared_key` shared experts of the routed
// experts' width, the first first_k_dense_replace layers dense (intermediate_size), the rest MoE,
// num_nextn_predict_layers MTP modules.
Status ReadFirstDenseLayout(const ObjectReader& r, std::string_view shared_key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr(shared_key, 0, 0, L::kMaxSharedExperts));
  m->num_shared_experts = static_cast<int>(shared);
  m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
  L2S_ASSIGN_OR_RETURN(int64_t first_dense, r.IntOr("first_k_dense_replace", 0, 0, m->num_layers));
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = i >= first_dense ? FfnKind::kMoe : FfnKind::kDense;
  return ReadDenseFfnAndMtp(r, m);
}

// GLM-4.5 / 4.6 / 4.7 (Glm4MoeConfig): GQA with q/k/v biases (attention_bias; o_proj has none),
// optional per-head q/k norm, DeepSeek-style MoE layout with a score-correction bias.
Status ReadGlm4Moe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->qkv_bias, r.BoolOr("attention_bias", false));
  L2S_ASSIGN_OR_RETURN(m->qk_norm, r.BoolOr("use_qk_norm", false));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  m->router_bias = true;  // Glm4MoeTopkRouter: e_score_correction_bias
  L2S_RETURN_IF_ERROR(ReadFirstDenseLayout(r, "n_shared_experts", m));
  return ReadMlpLayerTypes(r, m);
}

// MiniMax-M2 (MiniMaxM2Config): GQA, q/k RMSNorm over all heads (qk_norm_type "per_layer") or
// per head, every layer MoE (num_local_experts of intermediate_size), routing bias.
// attn_type_list: 1 = softmax attention; 0 (MiniMax-01 lightning attention) is not supported.
// The MTP modules (num_mtp_modules) are not counted (their shape is not in the config).
Status ReadMinimaxM2(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(bool qk, r.BoolOr("use_qk_norm", false));
  L2S_ASSIGN_OR_RETURN(std::string qk_type, r.StringOr("qk_norm_type", "per_layer"));
  if (qk_type != "per_layer" && qk_type != "per_head")
    return r.Error("qk_norm_type", "\"per_layer\" or \"per_head\"", r.Find("qk_norm_type"));
  m->qk_norm_full = qk && qk_type == "per_layer";
  m->qk_norm = qk && qk_type == "per_head";
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
  SetAllMoe(m);
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("shared_intermediate_size", 0, 0, L::kMaxFfn));
  m->num_shared_experts = shared > 0 ? 1 : 0;
  m->shared_ffn_size = shared;
  L2S_ASSIGN_OR_RETURN(m->router_bias, r.BoolOr("use_routing_bias", false));
  if (const json* types = r.Find("attn_type_list")) {
    const std::string what = fmt::format("a list of {} of 1 (softmax attention)", m->num_layers);
    if (!types->is_array() || types->size() != static_cast<size_t>(m->num_layers))
      return r.Error("attn_type_list", what, types);
    for (const json& t : *types) {
      if (!t.is_number_integer() || (t.get<int64_t>() != 0 && t.get<int64_t>() != 1))
        return r.Error("attn_type_list", what, &t);
      if (t.get<int64_t>() == 0)
        return Status::Unsupported(fmt::format(
            "{}: field \"attn_type_list\": lightning-attention layers (0) are not supported; "
            "expected 1 (softmax attention) on every layer", r.source()));
    }
  }
  L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
  for (LayerSpec& l : m->layers) l.window = static_cast<int>(w);
  return Status::Ok();
}

// Qwen3-Next (Qwen3NextConfig): layer_types ("linear_attention" / "full_attention") or every
// full_attention_interval-th layer full; full layers are gated GQA with q/k norm; linear layers
// are gated DeltaNet; FFNs as qwen3_moe plus one gated shared expert (shared_expert_gate [1, h]).
// Qwen3.5 / 3.6 (Qwen3_5TextConfig, Qwen3_5MoeTextConfig, `v35`): the same layers, every layer
// MoE (num_experts > 0, as qwen3_next) or, with num_experts absent or 0, every layer dense
// (intermediate_size); mtp_num_hidden_layers MTP layers (one full-attention decoder layer each,
// sharing the main model's embedding and head).
Status ReadQwen3Next(const ObjectReader& r, bool v35, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = true;
  m->gated_attention = true;
  if (r.Has("layer_types")) {
    std::vector<int> t;
    L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "layer_types", m->num_layers,
                                         {"full_attention", "linear_attention"}, &t));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].mixer = t[i] == 1 ? Mixer::kLinear : Mixer::kAttention;
  } else {
    L2S_ASSIGN_OR_RETURN(int64_t every,
                         r.Int("full_attention_interval", 1, L::kMaxLayers));
    for (int i = 0; i < m->num_layers; ++i)
      m->layers[i].mixer = (i + 1) % every == 0 ? Mixer::kAttention : Mixer::kLinear;
  }
  if (m->num_mixer_layers(Mixer::kLinear) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t kh, r.Int("linear_num_key_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t vh, r.Int("linear_num_value_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t kd, r.Int("linear_key_head_dim", 1, L::kMaxState));
    L2S_ASSIGN_OR_RETURN(int64_t vd, r.Int("linear_value_head_dim", 1, L::kMaxState));
    L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr("linear_conv_kernel_dim", 4, 1, 64));
    if (vh % kh != 0)
      return r.Error("linear_num_key_heads",
                     fmt::format("a divisor of linear_num_value_heads ({})", vh),
                     r.Find("linear_num_key_heads"));
    m->linear_key_heads = static_cast<int>(kh);
    m->linear_value_heads = static_cast<int>(vh);
    m->linear_key_dim = static_cast<int>(kd);
    m->linear_value_dim = static_cast<int>(vd);
    m->linear_conv_kernel = static_cast<int>(conv);
  }
  if (v35) {
    L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("mtp_num_hidden_layers", 0, 0, L::kMaxMtpLayers));
    m->mtp_layers = static_cast<int>(mtp);
    m->mtp_shares_embeddings = true;
    L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_experts", 0, 0, L::kMaxExperts));
    if (experts == 0) {
      L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
      return Status::Ok();
    }
  }
  return ReadQwenSparseLayout(r, /*gated_shared=*/true, m);
}

// Gemma 2 / 3 / 4 text models (Gemma2Config, Gemma3TextConfig, Gemma4TextConfig): GQA with
// per-head q/k norm (not Gemma 2), pre+post norms around both sublayers, gated GELU MLP, tied embeddings by default;
// layer_types, else every sliding_window_pattern-th layer full. Gemma 4: full layers use
// global_head_dim and, with attention_k_eq_v, num_global_key_value_heads and no v_proj; with
// enable_moe_block every layer runs routed experts beside its dense MLP (the MLP is the shared
// expert). Per-layer-input embeddings (hidden_size_per_layer_input), cross-layer KV sharing
// (num_kv_shared_layers) and double-wide MLPs are not supported.
Status ReadGemma(const ObjectReader& r, Family f, const ObjectReader& top, ModelSpec* m) {
  const bool gemma4 = f == Family::kGemma4;
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = f != Family::kGemma2;  // Gemma 2 has no q/k norm
  m->norms_per_sublayer = 2;
  L2S_ASSIGN_OR_RETURN(bool top_tied, top.BoolOr("tie_word_embeddings", true));
  L2S_ASSIGN_OR_RETURN(m->tied_embeddings, r.BoolOr("tie_word_embeddings", top_tied));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(int64_t window, ReadWindowOr(r, "sliding_window"));
  std::vector<int> sliding(m->num_layers, 0);
  if (r.Has("layer_types")) {
    L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "layer_types", m->num_layers,
                                         {"full_attention", "sliding_attention"}, &sliding));
  } else {
    L2S_ASSIGN_OR_RETURN(int64_t pattern, r.Int("sliding_window_pattern", 1, L::kMaxLayers));
    for (int i = 0; i < m->num_layers; ++i) sliding[i] = (i + 1) % pattern == 0 ? 0 : 1;
  }
  for (int i = 0; i < m->num_layers; ++i) {
    if (sliding[i] == 0) continue;
    if (window <= 0)
      return r.ErrorMsg("sliding_window",
                        "expected a positive integer when the model has sliding layers");
    m->layers[i].window = static_cast<int>(window);
  }
  if (!gemma4) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t ple, r.IntOr("hidden_size_per_layer_input", 0, 0, L::kMaxHidden));
  if (ple > 0)
    return Status::Unsupported(fmt::format(
        "{}: field \"{}\": per-layer input embeddings are not supported; expected 0",
        r.source(), r.FieldName("hidden_size_per_layer_input")));
  L2S_ASSIGN_OR_RETURN(int64_t kv_shared, r.IntOr("num_kv_shared_layers", 0, 0, L::kMaxLayers));
  if (kv_shared > 0)
    return Status::Unsupported(fmt::format(
        "{}: field \"{}\": cross-layer KV sharing is not supported; expected 0", r.source(),
        r.FieldName("num_kv_shared_layers")));
  L2S_ASSIGN_OR_RETURN(bool wide, r.BoolOr("use_double_wide_mlp", false));
  if (wide)
    return Status::Unsupported(fmt::format(
        "{}: field \"{}\": double-wide MLPs are not supported; expected false", r.source(),
        r.FieldName("use_double_wide_mlp")));
  L2S_ASSIGN_OR_RETURN(int64_t ghd, r.IntOr("global_head_dim", m->head_dim, 1, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(bool k_eq_v, r.BoolOr("attention_k_eq_v", false));
  int64_t gkv = m->num_kv_heads;
  if (k_eq_v) {
    L2S_ASSIGN_OR_RETURN(gkv, r.IntOr("num_global_key_value_heads", m->num_kv_heads, 1,
                                      m->num_heads));
    if (m->num_heads % gkv != 0)
      return r.Error("num_global_key_value_heads",
                     fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                     r.Find("num_global_key_value_heads"));
  }
  for (LayerSpec& l : m->layers) {
    if (l.window > 0) continue;
    if (ghd != m->head_dim) l.head_dim = static_cast<int>(ghd);
    if (gkv != m->num_kv_heads) l.kv_heads = static_cast<int>(gkv);
    l.k_eq_v = k_eq_v;
  }
  m->misc_params_per_layer = 1;  // layer_scalar
  L2S_ASSIGN_OR_RETURN(bool moe, r.BoolOr("enable_moe_block", false));
  if (moe) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "num_experts", "top_k_experts", "moe_intermediate_size", m));
    SetAllMoe(m);
    m->num_shared_experts = 1;  // the dense MLP runs beside the experts
    m->shared_ffn_size = m->dense_ffn_size;
    // Router scale [h] and per-expert scale [E]; post_feedforward_layernorm_1/2 and
    // pre_feedforward_layernorm_2 [h] each.
    m->misc_params_per_moe_layer = 4 * m->hidden_size + m->num_experts;
  }
  return Status::Ok();
}

// Phi-3 / Phi-4 (Phi3Config): llama layout with fused qkv / gate_up projections (same counts),
// sliding_window (null = none) on every layer.
Status ReadPhi3(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
  for (LayerSpec& l : m->layers) l.window = static_cast<int>(w);
  return Status::Ok();
}

// The Mamba fields of `m` (values already range-checked by the reader).
void SetMamba(int version, int64_t heads, int64_t head_dim, int64_t state, int64_t groups,
              int64_t conv, int64_t dt_rank, int64_t chunk, ModelSpec* m) {
  m->mamba_version = version;
  m->mamba_heads = static_cast<int>(heads);
  m->mamba_head_dim = static_cast<int>(head_dim);
  m->mamba_state = static_cast<int>(state);
  m->mamba_groups = static_cast<int>(groups);
  m->mamba_conv_kernel = static_cast<int>(conv);
  m->mamba_dt_rank = static_cast<int>(dt_rank);
  m->mamba_chunk = static_cast<int>(chunk);
}

// The Mamba2 fields after the head count and head dim, under each config class's own key names
// (NemotronHConfig: ssm_state_size, n_groups, conv_kernel, chunk_size, use_conv_bias;
// GraniteMoeHybridConfig: mamba_d_state, ... with its mamba_ prefix) and defaults.
struct Mamba2Keys {
  const char* heads;  // named in the groups error
  const char* state;
  int64_t state_default;  // < 0: required
  const char* groups;
  const char* conv;
  const char* chunk;
  int64_t chunk_default;  // 0: none stated
  const char* conv_bias;
};

Status ReadMamba2Tail(const ObjectReader& r, const Mamba2Keys& k, int64_t heads, int64_t hd,
                      ModelSpec* m) {
  int64_t state = 0;
  if (k.state_default < 0) {
    L2S_ASSIGN_OR_RETURN(state, r.Int(k.state, 1, L::kMaxState));
  } else {
    L2S_ASSIGN_OR_RETURN(state, r.IntOr(k.state, k.state_default, 1, L::kMaxState));
  }
  L2S_ASSIGN_OR_RETURN(int64_t groups, r.IntOr(k.groups, 1, 1, heads));
  L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr(k.conv, 4, 1, 64));
  L2S_ASSIGN_OR_RETURN(int64_t chunk, r.IntOr(k.chunk, k.chunk_default, 1, 1 << 16));
  if (heads % groups != 0)
    return r.Error(k.groups, fmt::format("a divisor of {} ({})", k.heads, heads),
                   r.Find(k.groups));
  SetMamba(2, heads, hd, state, groups, conv, 0, chunk, m);
  L2S_ASSIGN_OR_RETURN(m->mamba_conv_bias, r.BoolOr(k.conv_bias, true));
  L2S_ASSIGN_OR_RETURN(m->mamba_proj_bias, r.BoolOr("mamba_proj_bias", false));
  return Status::Ok();
}

// Jamba (JambaConfig): layer i is attention iff i % attn_layer_period == attn_layer_offset, else
// Mamba (v1); its FFN is MoE iff i % expert_layer_period == expert_layer_offset (and
// num_experts > 1). Mamba: inner = mamba_expand * hidden, mamba_d_state, mamba_d_conv,
// mamba_dt_rank ("auto" = ceil(hidden / 16)).
Status ReadJamba(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(int64_t ap, r.IntOr("attn_layer_period", 8, 1, L::kMaxLayers));
  L2S_ASSIGN_OR_RETURN(int64_t ao, r.IntOr("attn_layer_offset", 4, 0, ap - 1));
  L2S_ASSIGN_OR_RETURN(int64_t ep, r.IntOr("expert_layer_period", 2, 1, L::kMaxLayers));
  L2S_ASSIGN_OR_RETURN(int64_t eo, r.IntOr("expert_layer_offset", 1, 0, ep - 1));
  L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_experts", 16, 1, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
  for (int i = 0; i < m->num_layers; ++i) {
    LayerSpec& l = m->layers[i];
    l.mixer = i % ap == ao ? Mixer::kAttention : Mixer::kMamba;
    if (l.mixer == Mixer::kAttention) l.window = static_cast<int>(w);
    l.ffn = experts > 1 && i % ep == eo ? FfnKind::kMoe : FfnKind::kDense;
  }
  if (m->num_moe_layers() > 0)
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "num_experts", "num_experts_per_tok", "intermediate_size", m));
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  if (m->num_mixer_layers(Mixer::kMamba) == 0) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("mamba_expand", 2, 1, 16));
  L2S_ASSIGN_OR_RETURN(int64_t state, r.IntOr("mamba_d_state", 16, 1, L::kMaxState));
  L2S_ASSIGN_OR_RETURN(int64_t conv, r.IntOr("mamba_d_conv", 4, 1, 64));
  int64_t dt_rank = (m->hidden_size + 15) / 16;
  const json* dtr = r.Find("mamba_dt_rank");
  if (dtr != nullptr && !(dtr->is_string() && dtr->get_ref<const std::string&>() == "auto")) {
    L2S_ASSIGN_OR_RETURN(dt_rank, r.Int("mamba_dt_rank", 1, L::kMaxHidden));
  }
  SetMamba(1, expand * m->hidden_size, 1, state, 1, conv, dt_rank, 0, m);
  L2S_ASSIGN_OR_RETURN(m->mamba_conv_bias, r.BoolOr("mamba_conv_bias", true));
  L2S_ASSIGN_OR_RETURN(m->mamba_proj_bias, r.BoolOr("mamba_proj_bias", false));
  return Status::Ok();
}

// Nemotron-H (NemotronHConfig): one mixer per block, one norm per block. hybrid_override_pattern
// ("M" Mamba2, "*" attention, "-" MLP, "E" MoE) or layers_block_type ("mamba" / "attention" /
// "mlp" / "moe"), one entry per layer. MLP and experts are non-gated (relu2). MoE: routed experts
// of moe_intermediate_size (in moe_latent_size when set: latent MoE), shared experts of
// moe_shared_expert_intermediate_size, score-correction bias.
Status ReadNemotronH(const ObjectReader& r, ModelSpec* m) {
  m->gated_ffn = false;
  m->norms_per_sublayer = 1;
  std::vector<int> kinds;  // 0 M, 1 *, 2 -, 3 E
  if (const json* p = r.Find("hybrid_override_pattern")) {
    const std::string what =
        fmt::format("a string of {} characters from M * - E (one per layer)", m->num_layers);
    if (!p->is_string()) return r.Error("hybrid_override_pattern", what, p);
    const std::string& s = p->get_ref<const std::string&>();
    if (s.size() != static_cast<size_t>(m->num_layers))
      return r.ErrorMsg("hybrid_override_pattern",
                        fmt::format("expected {} characters (one per layer, num_hidden_layers), "
                                    "got {}", m->num_layers, s.size()));
    for (char c : s) {
      const size_t k = std::string_view("M*-E").find(c);
      if (k == std::string_view::npos)
        return r.ErrorMsg("hybrid_override_pattern",
                          fmt::format("expected only M, *, - and E, got '{}'", c));
      kinds.push_back(static_cast<int>(k));
    }
  } else if (r.Has("layers_block_type")) {
    L2S_RETURN_IF_ERROR(ReadLayerStrings(r, "layers_block_type", m->num_layers,
                                         {"mamba", "attention", "mlp", "moe"}, &kinds));
  } else {
    return r.Error("hybrid_override_pattern",
                   "a string of M * - E (or layers_block_type), one per layer", nullptr);
  }
  for (int i = 0; i < m->num_layers; ++i) {
    LayerSpec& l = m->layers[i];
    l.mixer = kinds[i] == 0 ? Mixer::kMamba : kinds[i] == 1 ? Mixer::kAttention : Mixer::kNone;
    l.ffn = kinds[i] == 2 ? FfnKind::kDense : kinds[i] == 3 ? FfnKind::kMoe : FfnKind::kNone;
  }
  if (m->num_mixer_layers(Mixer::kAttention) > 0) {
    if (r.Has("attention_head_dim") && !r.Has("head_dim")) {
      L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("attention_head_dim", 1, L::kMaxHeadDim));
      m->head_dim = static_cast<int>(hd);
      if (m->num_heads % m->num_kv_heads != 0)
        return r.Error("num_key_value_heads",
                       fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                       r.Find("num_key_value_heads"));
    } else {
      L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
    }
    L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
    L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(r, "sliding_window"));
    for (LayerSpec& l : m->layers)
      if (l.mixer == Mixer::kAttention) l.window = static_cast<int>(w);
  } else {
    m->head_dim = static_cast<int>(std::max<int64_t>(1, m->hidden_size / m->num_heads));
  }
  if (m->num_dense_layers() > 0) {
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  }
  if (m->num_moe_layers() > 0) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
    L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("n_shared_experts", 0, 0, L::kMaxSharedExperts));
    if (shared > 0) {
      L2S_ASSIGN_OR_RETURN(m->shared_ffn_size,
                           r.Int("moe_shared_expert_intermediate_size", 1, L::kMaxFfn));
    }
    m->num_shared_experts = static_cast<int>(shared);
    L2S_ASSIGN_OR_RETURN(m->moe_latent_size, r.IntOr("moe_latent_size", 0, 1, L::kMaxHidden));
    m->router_bias = true;  // e_score_correction_bias
  }
  if (m->num_mixer_layers(Mixer::kMamba) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("mamba_head_dim", 1, L::kMaxHeadDim));
    // NemotronHConfig: mamba_num_heads, else expand x hidden / mamba_head_dim.
    L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("expand", 2, 1, 16));
    int64_t heads = expand * m->hidden_size / hd;
    if (r.Has("mamba_num_heads") || heads < 1) {
      L2S_ASSIGN_OR_RETURN(heads, r.Int("mamba_num_heads", 1, 4 * L::kMaxHidden));
    }
    static constexpr Mamba2Keys kKeys{"mamba_num_heads", "ssm_state_size", -1,  "n_groups",
                                      "conv_kernel",     "chunk_size",     0,   "use_conv_bias"};
    L2S_RETURN_IF_ERROR(ReadMamba2Tail(r, kKeys, heads, hd, m));
  }
  return Status::Ok();
}

// Llama-Nemotron (DeciLMConfig, model_type nemotron-nas): a llama whose every layer has its own
// block_configs entry: attention {no_op, replace_with_linear, n_heads_in_group, window_length},
// ffn {no_op, replace_with_linear, ffn_mult}. KV heads = heads / n_heads_in_group; FFN width =
// 2 * ffn_mult * hidden / 3 rounded up to a multiple of 256 (DeciLM's _ffn_mult_to_intermediate
// _size). Norms: one before each present sublayer. replace_with_linear: the sublayer is one
// hidden x hidden matrix.
Status ReadDeciLm(const ObjectReader& r, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  const json* blocks = r.Find("block_configs");
  const std::string what = fmt::format("a list of {} block configs (one per layer)", m->num_layers);
  if (blocks == nullptr || !blocks->is_array()) return r.Error("block_configs", what, blocks);
  if (blocks->size() != static_cast<size_t>(m->num_layers))
    return r.ErrorMsg("block_configs", fmt::format("expected {} entries (one per layer, "
                                                   "num_hidden_layers), got {}",
                                                   m->num_layers, blocks->size()));
  if (r.Has("head_dim")) {
    L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("head_dim", 1, L::kMaxHeadDim));
    m->head_dim = static_cast<int>(hd);
  } else {
    if (m->hidden_size % m->num_heads != 0)
      return r.Error("num_attention_heads",
                     fmt::format("a divisor of hidden_size ({})", m->hidden_size),
                     r.Find("num_attention_heads"));
    m->head_dim = static_cast<int>(m->hidden_size / m->num_heads);
  }
  int64_t max_ffn = 0;
  int first_kv = 0;
  for (int i = 0; i < m->num_layers; ++i) {
    const std::string at = fmt::format("block_configs[{}].", i);
    const json& b = (*blocks)[static_cast<size_t>(i)];
    if (!b.is_object()) return r.Error("block_configs", what, &b);
    const json* a = b.contains("attention") ? &b["attention"] : nullptr;
    const json* f = b.contains("ffn") ? &b["ffn"] : nullptr;
    if (a == nullptr || !a->is_object())
      return ObjectReader(b, r.source(), r.FieldName(at)).Error("attention", "an object", a);
    if (f == nullptr || !f->is_object())
      return ObjectReader(b, r.source(), r.FieldName(at)).Error("ffn", "an object", f);
    ObjectReader ar(*a, r.source(), r.FieldName(at + "attention."));
    ObjectReader fr(*f, r.source(), r.FieldName(at + "ffn."));
    LayerSpec& l = m->layers[i];
    L2S_ASSIGN_OR_RETURN(bool a_noop, ar.BoolOr("no_op", false));
    L2S_ASSIGN_OR_RETURN(bool a_lin, ar.BoolOr("replace_with_linear", false));
    L2S_ASSIGN_OR_RETURN(bool f_noop, fr.BoolOr("no_op", false));
    L2S_ASSIGN_OR_RETURN(bool f_lin, fr.BoolOr("replace_with_linear", false));
    if (a_noop || a_lin) {
      l.mixer = Mixer::kNone;
      l.attn_linear = a_lin && !a_noop;
    } else {
      L2S_ASSIGN_OR_RETURN(int64_t group, ar.Int("n_heads_in_group", 1, m->num_heads));
      if (m->num_heads % group != 0)
        return ar.Error("n_heads_in_group",
                        fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                        ar.Find("n_heads_in_group"));
      l.kv_heads = static_cast<int>(m->num_heads / group);
      if (first_kv == 0) first_kv = l.kv_heads;
      L2S_ASSIGN_OR_RETURN(int64_t w, ReadWindowOr(ar, "window_length"));
      l.window = static_cast<int>(w);
    }
    if (f_noop || f_lin) {
      l.ffn = FfnKind::kNone;
      l.ffn_linear = f_lin && !f_noop;
    } else {
      L2S_ASSIGN_OR_RETURN(double mult, fr.Positive("ffn_mult", 64.0));
      const int64_t raw = static_cast<int64_t>(2.0 * mult * static_cast<double>(m->hidden_size) / 3.0);
      const int64_t ffn = (raw + 255) / 256 * 256;
      if (ffn < 1 || ffn > L::kMaxFfn)
        return fr.Error("ffn_mult", fmt::format("a multiplier giving an FFN width in [1, {}]",
                                                L::kMaxFfn), fr.Find("ffn_mult"));
      l.ffn_size = ffn;
      max_ffn = std::max(max_ffn, ffn);
    }
  }
  // Model-wide values: the first attention layer's KV heads, the widest FFN (every layer carries
  // its own; these only describe the model).
  m->num_kv_heads = first_kv > 0 ? first_kv : m->num_heads;
  for (LayerSpec& l : m->layers)
    if (l.kv_heads == m->num_kv_heads) l.kv_heads = 0;
  m->dense_ffn_size = max_ffn;
  for (LayerSpec& l : m->layers)
    if (l.ffn_size == max_ffn) l.ffn_size = 0;
  return Status::Ok();
}

// LongCat-Flash (LongcatFlashConfig): num_layers blocks, each two MLA sublayers with a dense MLP
// (ffn_hidden_size) each, and a shortcut-connected MoE beside the first sublayer's MLP
// (n_routed_experts of expert_ffn_hidden_size, moe_topk, zero_expert_num identity experts).
// Modelled as 2 x num_layers layers alternating MLA + MoE-with-the-MLP-as-shared-expert and
// MLA + dense MLP; the router scores real and zero experts with a score-correction bias.
Status ReadLongcatFlash(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadMla(r, m));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "moe_topk", "expert_ffn_hidden_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t zero, r.IntOr("zero_expert_num", 0, 0, L::kMaxExperts));
  L2S_ASSIGN_OR_RETURN(std::string zt, r.StringOr("zero_expert_type", "identity"));
  if (zero > 0 && zt != "identity")
    return r.Error("zero_expert_type", "\"identity\"", r.Find("zero_expert_type"));
  if (m->experts_per_token > m->num_experts + zero)
    return r.Error("moe_topk", "at most n_routed_experts + zero_expert_num", r.Find("moe_topk"));
  m->num_zero_experts = static_cast<int>(zero);
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("ffn_hidden_size", 1, L::kMaxFfn));
  m->num_shared_experts = 1;
  m->shared_ffn_size = m->dense_ffn_size;
  m->router_bias = true;
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].ffn = i % 2 == 0 ? FfnKind::kMoe : FfnKind::kDense;
  m->mtp_layers = 0;
  return Status::Ok();
}

// Ling / Bailing MoE (BailingMoeConfig; bailing_moe_v2 adds q/k norm and an expert bias): GQA
// with a fused query_key_value (bias use_qkv_bias; the o bias of use_bias is ignored, hidden_size
// parameters per layer), first_k_dense_replace dense layers, then MoE with num_shared_experts of
// moe_intermediate_size.
Status ReadBailingMoe(const ObjectReader& r, bool v2, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(bool qkv_bias, r.BoolOr("use_qkv_bias", false));
  L2S_ASSIGN_OR_RETURN(bool o_bias, r.BoolOr("use_bias", false));
  m->attention_bias = qkv_bias && o_bias;
  m->qkv_bias = qkv_bias && !o_bias;
  if (v2) {
    L2S_ASSIGN_OR_RETURN(m->qk_norm, r.BoolOr("use_qk_norm", false));
    L2S_ASSIGN_OR_RETURN(m->router_bias, r.BoolOr("moe_router_enable_expert_bias", false));
  }
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  return ReadFirstDenseLayout(r, "num_shared_experts", m);
}

// Qwen1.5-MoE / Qwen2-MoE (Qwen2MoeConfig): Qwen2 attention (q/k/v biases, o without; optional
// sliding windows as qwen2) and the Qwen MoE layout with one gated shared expert.
Status ReadQwen2Moe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  m->qkv_bias = true;
  L2S_RETURN_IF_ERROR(ReadQwenSparseLayout(r, /*gated_shared=*/true, m));
  return ReadQwenWindows(r, m);
}

// OLMoE (OlmoeConfig): llama attention (attention_bias) with q/k RMSNorm over all heads (q_norm
// [hidden], k_norm [kv heads x head_dim]); every layer MoE: num_experts of intermediate_size, top
// num_experts_per_tok. clip_qkv clamps activations and changes no shape.
Status ReadOlmoe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm_full = true;
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_experts", "num_experts_per_tok", "intermediate_size", m));
  SetAllMoe(m);
  return Status::Ok();
}

// OLMo 2 / OLMo 3 (Olmo2Config, Olmo3Config): llama layout with q/k RMSNorm over all heads and the
// two norms after the sublayers instead of before (the same count); OLMo 3's layer_types mark
// sliding layers of sliding_window.
Status ReadOlmo2(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  m->qk_norm_full = true;
  const json* types = r.Find("layer_types");
  if (types == nullptr) return Status::Ok();
  L2S_ASSIGN_OR_RETURN(int64_t window, ReadWindowOr(r, "sliding_window"));
  return ReadLayerTypes(r, *types, window, m);
}

// Phi-3.5-MoE (PhimoeConfig): the Mixtral layout (num_local_experts of intermediate_size, top
// num_experts_per_tok, sliding_window) with LayerNorms that carry biases and optional q/k/v/o
// biases (attention_bias). The lm_head bias of lm_head_bias (vocab_size values) is not counted.
Status ReadPhiMoe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadMixtral(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  m->layernorm_bias = true;
  return Status::Ok();
}

// Granite 3 MoE (GraniteMoeConfig, GraniteMoeSharedConfig): llama attention (attention_bias),
// every layer MoE with num_local_experts of intermediate_size, top num_experts_per_tok; the
// shared variant adds one shared expert of shared_intermediate_size. Granite's scalar multipliers
// (embedding_multiplier, residual_multiplier, attention_multiplier, logits_scaling) change no
// shape.
Status ReadGraniteMoe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
  SetAllMoe(m);
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("shared_intermediate_size", 0, 0, L::kMaxFfn));
  m->num_shared_experts = shared > 0 ? 1 : 0;
  m->shared_ffn_size = shared;
  return Status::Ok();
}

// ERNIE 4.5 (Ernie4_5Config, Ernie4_5_MoeConfig): GQA; use_bias puts biases on every attention and
// FFN projection; embeddings tied unless tie_word_embeddings says otherwise (the classes'
// default). MoE: layer i is MoE iff (i + 1) % moe_layer_interval == 0 and moe_layer_start_index
// <= i <= moe_layer_end_index (-1 = the last layer); moe_num_experts of moe_intermediate_size,
// top moe_k, moe_num_shared_experts shared experts of the same width (one FFN of n times the
// width: the same count), a score-correction bias (moe_statics). Absent fields take the class's
// defaults (start 1, interval 1, 2 shared experts).
Status ReadErnie(const ObjectReader& r, bool moe, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(bool bias, r.BoolOr("use_bias", false));
  m->attention_bias = bias;
  m->dense_ffn_bias = bias;
  L2S_ASSIGN_OR_RETURN(m->tied_embeddings, r.BoolOr("tie_word_embeddings", true));
  if (!moe) {
    L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
    return Status::Ok();
  }
  m->expert_bias = bias;
  L2S_RETURN_IF_ERROR(ReadExperts(r, "moe_num_experts", "moe_k", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t shared,
                       r.IntOr("moe_num_shared_experts", 2, 0, L::kMaxSharedExperts));
  m->num_shared_experts = static_cast<int>(shared);
  m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
  const int64_t last = m->num_layers - 1;
  L2S_ASSIGN_OR_RETURN(int64_t start, r.IntOr("moe_layer_start_index", 1, 0, last));
  L2S_ASSIGN_OR_RETURN(int64_t end, r.IntOr("moe_layer_end_index", -1, -1, last));
  if (end == -1) end = last;
  L2S_ASSIGN_OR_RETURN(int64_t interval, r.IntOr("moe_layer_interval", 1, 1, L::kMaxLayers));
  for (int i = 0; i < m->num_layers; ++i) {
    const bool is_moe = (i + 1) % interval == 0 && i >= start && i <= end;
    m->layers[i].ffn = is_moe ? FfnKind::kMoe : FfnKind::kDense;
  }
  m->router_bias = true;
  return ReadDenseFfn(r, "intermediate_size", m);
}

// GLM-4 dense (GlmConfig "glm", Glm4Config "glm4" = GLM-4-0414): llama shapes with q/k/v biases
// (attention_bias; o_proj has none) and a fused gate_up projection (the same count); glm4 adds a
// norm after each sublayer (norms_per_sublayer 2).
Status ReadGlmDense(const ObjectReader& r, bool glm4, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(m->qkv_bias, r.BoolOr("attention_bias", true));
  if (glm4) m->norms_per_sublayer = 2;
  return Status::Ok();
}

// Seed-OSS (SeedOssConfig): llama shapes; attention_bias puts biases on q/k/v,
// attention_out_bias on o, mlp_bias on the MLP.
Status ReadSeedOss(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(bool qkv, r.BoolOr("attention_bias", false));
  L2S_ASSIGN_OR_RETURN(bool o, r.BoolOr("attention_out_bias", false));
  m->attention_bias = qkv && o;
  m->qkv_bias = qkv && !o;
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_bias, r.BoolOr("mlp_bias", false));
  return Status::Ok();
}

// Command R / R+ (CohereConfig "cohere") and Command R7B / A (Cohere2Config "cohere2"): GQA with
// optional biases (attention_bias), attention and MLP in parallel behind one LayerNorm without
// bias (counted as the usual two norms: hidden_size values per layer over), tied embeddings unless
// tie_word_embeddings says otherwise. cohere: use_qk_norm (per-head norms). cohere2: layer_types,
// else layer i slides over sliding_window (4096 when absent) unless (i + 1) %
// sliding_window_pattern (4) == 0, as Cohere2Config derives it.
Status ReadCohere(const ObjectReader& r, bool v2, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_ASSIGN_OR_RETURN(m->dense_ffn_size, r.Int("intermediate_size", 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(m->tied_embeddings, r.BoolOr("tie_word_embeddings", true));
  if (!v2) {
    L2S_ASSIGN_OR_RETURN(m->qk_norm, r.BoolOr("use_qk_norm", false));
    return Status::Ok();
  }
  int64_t window = 4096;
  if (r.Has("sliding_window")) {
    L2S_ASSIGN_OR_RETURN(window, ReadWindowOr(r, "sliding_window"));
  }
  if (const json* types = r.Find("layer_types")) return ReadLayerTypes(r, *types, window, m);
  L2S_ASSIGN_OR_RETURN(int64_t pattern, r.IntOr("sliding_window_pattern", 4, 1, L::kMaxLayers));
  if (window <= 0) return Status::Ok();  // sliding_window: null: every layer full
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].window = (i + 1) % pattern != 0 ? static_cast<int>(window) : 0;
  return Status::Ok();
}

// dots.llm1 (Dots1Config): Qwen3 attention (per-head q/k norm, attention_bias) and the
// DeepSeek-V3 MoE (n_routed_experts of moe_intermediate_size, n_shared_experts of the same width,
// first_k_dense_replace dense layers, a score-correction bias). layer_types, else layers >=
// max_window_layers (default: all layers, i.e. none) slide over sliding_window.
Status ReadDots1(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = true;
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  m->router_bias = true;
  L2S_RETURN_IF_ERROR(ReadFirstDenseLayout(r, "n_shared_experts", m));
  L2S_ASSIGN_OR_RETURN(int64_t window, ReadWindowOr(r, "sliding_window"));
  if (const json* types = r.Find("layer_types")) return ReadLayerTypes(r, *types, window, m);
  L2S_ASSIGN_OR_RETURN(int64_t first_sliding,
                       r.IntOr("max_window_layers", m->num_layers, 0, L::kMaxLayers));
  for (int i = static_cast<int>(first_sliding); i < m->num_layers && window > 0; ++i)
    m->layers[i].window = static_cast<int>(window);
  return Status::Ok();
}

// Granite 4.0 hybrid (GraniteMoeHybridConfig): layer_types ("mamba" / "attention"; absent = every
// layer Mamba) choose each layer's mixer: Mamba2 (mamba_n_heads of mamba_d_head, "auto" = expand x
// hidden / heads; mamba_d_state, mamba_n_groups, mamba_d_conv, mamba_chunk_size, mamba_conv_bias,
// mamba_proj_bias) or GQA attention (attention_bias). Every layer then has a shared MLP of
// shared_intermediate_size and, when num_local_experts > 0, MoE beside it (num_local_experts of
// intermediate_size, top num_experts_per_tok); with no experts that MLP is the layer's dense FFN.
Status ReadGraniteMoeHybrid(const ObjectReader& r, ModelSpec* m) {
  std::vector<int> kinds(m->num_layers, 0);  // 0 mamba, 1 attention
  if (r.Has("layer_types")) {
    L2S_RETURN_IF_ERROR(
        ReadLayerStrings(r, "layer_types", m->num_layers, {"mamba", "attention"}, &kinds));
  }
  for (int i = 0; i < m->num_layers; ++i)
    m->layers[i].mixer = kinds[i] == 1 ? Mixer::kAttention : Mixer::kMamba;
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.IntOr("shared_intermediate_size", 1024, 1, L::kMaxFfn));
  L2S_ASSIGN_OR_RETURN(int64_t experts, r.IntOr("num_local_experts", 8, 0, L::kMaxExperts));
  if (experts > 0) {
    L2S_RETURN_IF_ERROR(
        ReadExperts(r, "num_local_experts", "num_experts_per_tok", "intermediate_size", m));
    SetAllMoe(m);
    m->num_shared_experts = 1;
    m->shared_ffn_size = shared;
  } else {
    m->dense_ffn_size = shared;
  }
  if (m->num_mixer_layers(Mixer::kMamba) > 0) {
    L2S_ASSIGN_OR_RETURN(int64_t heads, r.IntOr("mamba_n_heads", 128, 1, 4 * L::kMaxHidden));
    L2S_ASSIGN_OR_RETURN(int64_t expand, r.IntOr("mamba_expand", 2, 1, 16));
    // As GraniteMoeHybridConfig checks: heads x head dim = mamba_expand x hidden_size.
    const int64_t inner = expand * m->hidden_size;
    int64_t hd = inner / heads;
    const json* d_head = r.Find("mamba_d_head");
    if (d_head != nullptr && !(d_head->is_string() && d_head->get<std::string>() == "auto")) {
      L2S_ASSIGN_OR_RETURN(hd, r.Int("mamba_d_head", 1, L::kMaxHeadDim));
    }
    if (hd * heads != inner || hd > L::kMaxHeadDim)
      return r.Error("mamba_n_heads",
                     fmt::format("heads that split mamba_expand x hidden_size ({}) into heads of "
                                 "mamba_d_head (1 to {})", inner, L::kMaxHeadDim),
                     r.Find("mamba_n_heads"));
    static constexpr Mamba2Keys kKeys{"mamba_n_heads", "mamba_d_state",    256, "mamba_n_groups",
                                      "mamba_d_conv",  "mamba_chunk_size", 256, "mamba_conv_bias"};
    L2S_RETURN_IF_ERROR(ReadMamba2Tail(r, kKeys, heads, hd, m));
  }
  return Status::Ok();
}

// DeepSeek-V4 (the released config.json and inference/model.py): attention with one shared KV
// vector of head_dim per token (num_key_value_heads must be 1), q through a q_lora_rank latent,
// output through o_groups groups of o_lora_rank (wo_a) and wo_b. compress_ratios gives each layer
// (entries past num_hidden_layers belong to the MTP layers and are not read): 0 = attention over
// the last sliding_window tokens only; r > 0 = also over the KV pooled every r tokens, where
// r == 4 adds an indexer (index_n_heads x index_head_dim) choosing index_topk pooled entries.
// Every layer is MoE (DeepSeek-V3 style: n_shared_experts of moe_intermediate_size, a
// score-correction bias), the first num_hash_layers routing by token id. hc_mult residual streams
// carry per-layer mixing weights: 2 x ((2 + hc) hc x hc hidden + (2 + hc) hc + 3) parameters.
Status ReadDeepseekV4(const ObjectReader& r, ModelSpec* m) {
  if (m->num_kv_heads != 1)
    return r.Error("num_key_value_heads", "1 (DeepSeek-V4 attention shares one KV head)",
                   r.Find("num_key_value_heads"));
  L2S_ASSIGN_OR_RETURN(int64_t hd, r.Int("head_dim", 2, L::kMaxHeadDim));
  L2S_ASSIGN_OR_RETURN(int64_t rope, r.Int("qk_rope_head_dim", 0, hd - 1));
  L2S_ASSIGN_OR_RETURN(int64_t q_lora, r.Int("q_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t o_lora, r.Int("o_lora_rank", 1, L::kMaxLoraRank));
  L2S_ASSIGN_OR_RETURN(int64_t groups, r.Int("o_groups", 1, m->num_heads));
  if (m->num_heads % groups != 0)
    return r.Error("o_groups", fmt::format("a divisor of num_attention_heads ({})", m->num_heads),
                   r.Find("o_groups"));
  L2S_ASSIGN_OR_RETURN(int64_t window, r.Int("sliding_window", 1, L::kMaxWindow));
  L2S_ASSIGN_OR_RETURN(int64_t hc, r.Int("hc_mult", 1, 64));
  m->attention = AttentionKind::kMla;
  m->num_kv_heads = m->num_heads;  // the MLA convention (model.h)
  m->head_dim = static_cast<int>(hd);
  m->qk_rope_head_dim = static_cast<int>(rope);
  m->qk_nope_head_dim = static_cast<int>(hd - rope);
  m->kv_lora_rank = static_cast<int>(hd - rope);
  m->v_head_dim = static_cast<int>(hd);
  m->q_lora_rank = static_cast<int>(q_lora);
  m->o_lora_rank = static_cast<int>(o_lora);
  m->o_groups = static_cast<int>(groups);
  m->hc_mult = static_cast<int>(hc);
  m->attention_sinks = true;  // attn_sink, one logit per head
  const int64_t mix = (2 + hc) * hc;
  m->misc_params_per_layer = 2 * (mix * hc * m->hidden_size + mix + 3);

  const json* ratios = r.Find("compress_ratios");
  const std::string what = fmt::format(
      "a list of at least {} (num_hidden_layers) integers in [0, 65536]", m->num_layers);
  if (ratios == nullptr || !ratios->is_array()) return r.Error("compress_ratios", what, ratios);
  if (ratios->size() < static_cast<size_t>(m->num_layers))
    return r.ErrorMsg("compress_ratios",
                      fmt::format("expected at least {} entries (one per layer, "
                                  "num_hidden_layers), got {}",
                                  m->num_layers, ratios->size()));
  bool any_indexer = false;
  for (int i = 0; i < m->num_layers; ++i) {
    const json& e = (*ratios)[static_cast<size_t>(i)];
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 65536)
      return r.Error("compress_ratios", what, &e);
    LayerSpec& l = m->layers[i];
    l.ffn = FfnKind::kMoe;
    l.window = static_cast<int>(window);
    l.compress_ratio = static_cast<int>(e.get<int64_t>());
    l.mixer = l.compress_ratio == 4 ? Mixer::kSparse : Mixer::kAttention;
    any_indexer |= l.compress_ratio == 4;
  }
  if (any_indexer) {
    L2S_ASSIGN_OR_RETURN(int64_t topk, r.Int("index_topk", 1, L::kMaxWindow));
    L2S_ASSIGN_OR_RETURN(int64_t ih, r.Int("index_n_heads", 1, L::kMaxHeads));
    L2S_ASSIGN_OR_RETURN(int64_t ihd, r.Int("index_head_dim", 1, L::kMaxHeadDim));
    m->index_topk = static_cast<int>(topk);
    m->index_heads = static_cast<int>(ih);
    m->index_head_dim = static_cast<int>(ihd);
  }
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t shared, r.Int("n_shared_experts", 0, L::kMaxSharedExperts));
  m->num_shared_experts = static_cast<int>(shared);
  m->shared_ffn_size = shared > 0 ? m->expert_ffn_size : 0;
  m->router_bias = true;  // score-correction bias on the non-hash layers
  L2S_ASSIGN_OR_RETURN(int64_t hash, r.IntOr("num_hash_layers", 0, 0, m->num_layers));
  m->num_hash_layers = static_cast<int>(hash);
  L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("num_nextn_predict_layers", 0, 0, L::kMaxMtpLayers));
  m->mtp_layers = static_cast<int>(mtp);
  m->mtp_shares_embeddings = true;
  return Status::Ok();
}

// Marks attention unquantized when a list of module patterns that stay unquantized
// (modules_to_not_convert, ignore, exclude_modules) names self_attn.
Status ReadUnquantizedModules(const ObjectReader& q, std::string_view key, ModelSpec* m) {
  const json* keep = q.Find(key);
  if (keep == nullptr) return Status::Ok();
  const char* what = "a list of module name patterns";
  if (!keep->is_array()) return q.Error(key, what, keep);
  for (const json& e : *keep) {
    if (!e.is_string()) return q.Error(key, what, &e);
    if (e.get_ref<const std::string&>().find("self_attn") != std::string::npos)
      m->attention_unquantized = true;
  }
  return Status::Ok();
}

constexpr const char* kPlannedFormats =
    "l2s prices bf16, fp8 and fp4 weights; to plan the model in one of them, drop "
    "quantization_config from a copy of the config and pass --dtype";

// NVIDIA TensorRT Model Optimizer's quant_algo (config.json quantization_config with quant_method
// "modelopt", or hf_quant_config.json's "quantization"): FP8* -> fp8 (FP8_PB* per-block scaled),
// NVFP4* / MXFP4 -> fp4 (NVFP4's 16-element FP8 scales are 1/32 byte per weight more than the
// MXFP4 l2s prices: 2%); the integer and mixed schemes are Unsupported.
Status ApplyModeloptAlgo(const ObjectReader& q, std::string_view key, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(std::string algo, q.String(key));
  if (algo.rfind("FP8", 0) == 0) {
    m->weight_dtype = DType::kFP8;
    m->weight_block_scaled = algo.rfind("FP8_PB", 0) == 0;
  } else if (algo.rfind("NVFP4", 0) == 0 || algo == "MXFP4") {
    m->weight_dtype = DType::kFP4;
  } else {
    return Status::Unsupported(fmt::format(
        "{}: field \"{}\": quant_algo {} is not modelled (FP8*, NVFP4* and MXFP4 are); {}",
        q.source(), q.FieldName(key), jsonio::Snippet(*q.Find(key)), kPlannedFormats));
  }
  return Status::Ok();
}

// compressed-tensors (llm-compressor): every config_groups entry's weights {num_bits, type,
// strategy}: 8-bit float -> fp8 (strategy "block" -> per-block scaled), 4-bit float -> fp4
// (NVFP4); integer weights (W4A16, W8A8-int) are Unsupported. All groups must agree.
Status ReadCompressedTensors(const ObjectReader& q, ModelSpec* m) {
  const json* groups = q.Find("config_groups");
  const char* what = "an object of quantization groups, each with weights {num_bits, type}";
  if (groups == nullptr || !groups->is_object() || groups->empty())
    return q.Error("config_groups", what, groups);
  const std::string groups_field = q.FieldName("config_groups");
  std::string seen;
  for (const auto& [name, g] : groups->items()) {
    if (!g.is_object()) return q.Error("config_groups", what, &g);
    ObjectReader gr(g, q.source(), fmt::format("{}.{}.", groups_field, name));
    const json* w = gr.Find("weights");
    if (w == nullptr || !w->is_object()) return gr.Error("weights", "{num_bits, type}", w);
    ObjectReader wr(*w, q.source(), fmt::format("{}.{}.weights.", groups_field, name));
    L2S_ASSIGN_OR_RETURN(int64_t bits, wr.Int("num_bits", 1, 32));
    L2S_ASSIGN_OR_RETURN(std::string type, wr.StringOr("type", "int"));
    L2S_ASSIGN_OR_RETURN(std::string strategy, wr.StringOr("strategy", "tensor"));
    const std::string format = fmt::format("{}-bit {}", bits, type);
    if (!seen.empty() && seen != format)
      return Status::Unsupported(fmt::format(
          "{}: field \"{}\": groups of {} and {} weights (one weight format per model is "
          "planned); {}", q.source(), groups_field, seen, format, kPlannedFormats));
    seen = format;
    if (type == "float" && bits == 8) {
      m->weight_dtype = DType::kFP8;
      m->weight_block_scaled = strategy == "block";
    } else if (type == "float" && bits == 4) {
      m->weight_dtype = DType::kFP4;
    } else {
      return Status::Unsupported(fmt::format(
          "{}: field \"{}.{}.weights\": {} weights are not modelled; {}", q.source(),
          groups_field, name, format, kPlannedFormats));
    }
  }
  return ReadUnquantizedModules(q, "ignore", m);
}

Status ReadQuantization(const ObjectReader& top, ModelSpec* m) {
  const json* qc = top.Find("quantization_config");
  if (qc == nullptr) return Status::Ok();
  if (!qc->is_object()) return top.Error("quantization_config", "an object", qc);
  ObjectReader q(*qc, top.source(), "quantization_config.");
  L2S_ASSIGN_OR_RETURN(std::string method, q.String("quant_method"));
  if (method == "fp8" || method == "fbgemm_fp8") {
    m->weight_dtype = DType::kFP8;
    m->weight_block_scaled = q.Find("weight_block_size") != nullptr;
  } else if (method == "mxfp4") {
    m->weight_dtype = DType::kFP4;
  } else if (method == "modelopt") {
    L2S_RETURN_IF_ERROR(ApplyModeloptAlgo(q, "quant_algo", m));
    return ReadUnquantizedModules(q, "ignore", m);
  } else if (method == "compressed-tensors") {
    return ReadCompressedTensors(q, m);
  } else {
    return Status::Unsupported(fmt::format(
        "{}: field \"quantization_config.quant_method\": expected one of fp8, fbgemm_fp8, "
        "mxfp4, modelopt, compressed-tensors, got {}; {}",
        top.source(), jsonio::Snippet(*q.Find("quant_method")), kPlannedFormats));
  }
  return ReadUnquantizedModules(q, "modules_to_not_convert", m);
}

}  // namespace

StatusOr<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name) {
  L2S_ASSIGN_OR_RETURN(json root, jsonio::Parse(json_text, source_name));
  return ParseHfConfigObject(root, source_name);
}

StatusOr<ModelSpec> ParseHfConfigObject(const json& root, std::string_view source_name) {
  if (!root.is_object())
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object at the top level, got {}",
                                               source_name, jsonio::Snippet(root)));
  ObjectReader top(root, source_name);
  L2S_ASSIGN_OR_RETURN(std::string model_type, top.String("model_type"));
  const json* cfg = &root;
  std::string prefix;
  const FamilyName* fam = FindFamily(model_type);
  if (const Wrapper* w = FindWrapper(model_type)) {
    // A wrapper: the family is the text tower's.
    const json* text = top.Find("text_config");
    if ((text == nullptr && !w->top_level) || (text != nullptr && !text->is_object()))
      return top.Error("text_config", "an object with the language model's fields", text);
    std::string text_type = w->text_default;
    if (text != nullptr) {
      ObjectReader t(*text, source_name, "text_config.");
      L2S_ASSIGN_OR_RETURN(text_type, t.StringOr("model_type", w->text_default));
      fam = FindFamily(text_type);
      if (fam == nullptr)
        return Status::Unsupported(fmt::format(
            "{}: field \"text_config.model_type\": unsupported architecture {} (in a {} "
            "wrapper); expected one of {}",
            source_name, jsonio::Snippet(*t.Find("model_type")), model_type, SupportedList()));
      cfg = text;
      prefix = "text_config.";
    } else {
      fam = FindFamily(text_type);
    }
  }
  if (fam == nullptr)
    return Status::Unsupported(
        fmt::format("{}: field \"model_type\": unsupported architecture {}; expected one of {}",
                    source_name, jsonio::Snippet(*top.Find("model_type")), SupportedList()));

  ModelSpec m;
  m.name = std::string(source_name);
  m.architecture = model_type == "llama4_text" ? "llama4" : model_type;

  // Gemma 2 / 3 checkpoints omit fields that equal their config class's defaults (HF
  // Gemma2Config / Gemma3TextConfig): fill those in, so that absent means what HF means.
  json filled;
  if (fam->family == Family::kGemma2 || fam->family == Family::kGemma3) {
    filled = *cfg;
    const bool g3 = fam->family == Family::kGemma3;
    const json defaults = {
        {"vocab_size", g3 ? 262208 : 256000}, {"hidden_size", 2304},
        {"intermediate_size", 9216},          {"num_hidden_layers", 26},
        {"num_attention_heads", 8},           {"num_key_value_heads", 4},
        {"head_dim", 256},                    {"max_position_embeddings", g3 ? 131072 : 8192},
        {"sliding_window", 4096},             {"sliding_window_pattern", g3 ? 6 : 2}};
    for (const auto& [k, v] : defaults.items())
      if (!filled.contains(k) || filled[k].is_null()) filled[k] = v;
    cfg = &filled;
  }
  ObjectReader r(*cfg, source_name, prefix);
  if (fam->family == Family::kLongcatFlash) {
    L2S_RETURN_IF_ERROR(ReadCommon(r, &m, "num_layers", /*per_block=*/2));
  } else if (fam->family == Family::kNemotronH) {
    const json* types = r.Find("layers_block_type");
    const int64_t n = types != nullptr && types->is_array() && !r.Has("hybrid_override_pattern")
                          ? static_cast<int64_t>(types->size())
                          : 0;
    L2S_RETURN_IF_ERROR(ReadCommon(r, &m, "num_hidden_layers", 1, n));
  } else {
    L2S_RETURN_IF_ERROR(ReadCommon(r, &m));
  }

  switch (fam->family) {
    case Family::kLlama:
    case Family::kMistral:
    case Family::kQwen2:
    case Family::kQwen3: L2S_RETURN_IF_ERROR(ReadLlamaLike(r, fam->family, &m)); break;
    case Family::kMixtral: L2S_RETURN_IF_ERROR(ReadMixtral(r, &m)); break;
    case Family::kQwen3Moe: L2S_RETURN_IF_ERROR(ReadQwen3Moe(r, &m)); break;
    case Family::kDeepseekV3: L2S_RETURN_IF_ERROR(ReadDeepseekV3(r, &m)); break;
    case Family::kGptOss: L2S_RETURN_IF_ERROR(ReadGptOss(r, &m)); break;
    case Family::kLlama4: L2S_RETURN_IF_ERROR(ReadLlama4(r, &m)); break;
    case Family::kDeepseekV32: L2S_RETURN_IF_ERROR(ReadDeepseekV32(r, &m)); break;
    case Family::kGlm4Moe: L2S_RETURN_IF_ERROR(ReadGlm4Moe(r, &m)); break;
    case Family::kGlmMoeDsa: L2S_RETURN_IF_ERROR(ReadGlmMoeDsa(r, &m)); break;
    case Family::kMinimaxM2: L2S_RETURN_IF_ERROR(ReadMinimaxM2(r, &m)); break;
    case Family::kQwen3Next: L2S_RETURN_IF_ERROR(ReadQwen3Next(r, false, &m)); break;
    case Family::kQwen35: L2S_RETURN_IF_ERROR(ReadQwen3Next(r, true, &m)); break;
    case Family::kGemma2:
    case Family::kGemma3:
    case Family::kGemma4: L2S_RETURN_IF_ERROR(ReadGemma(r, fam->family, top, &m)); break;
    case Family::kPhi3: L2S_RETURN_IF_ERROR(ReadPhi3(r, &m)); break;
    case Family::kJamba: L2S_RETURN_IF_ERROR(ReadJamba(r, &m)); break;
    case Family::kNemotronH: L2S_RETURN_IF_ERROR(ReadNemotronH(r, &m)); break;
    case Family::kDeciLm: L2S_RETURN_IF_ERROR(ReadDeciLm(r, &m)); break;
    case Family::kLongcatFlash: L2S_RETURN_IF_ERROR(ReadLongcatFlash(r, &m)); break;
    case Family::kBailingMoe: L2S_RETURN_IF_ERROR(ReadBailingMoe(r, false, &m)); break;
    case Family::kBailingMoeV2: L2S_RETURN_IF_ERROR(ReadBailingMoe(r, true, &m)); break;
    case Family::kDeepseekV4: L2S_RETURN_IF_ERROR(ReadDeepseekV4(r, &m)); break;
    case Family::kQwen2Moe: L2S_RETURN_IF_ERROR(ReadQwen2Moe(r, &m)); break;
    case Family::kOlmoe: L2S_RETURN_IF_ERROR(ReadOlmoe(r, &m)); break;
    case Family::kOlmo2: L2S_RETURN_IF_ERROR(ReadOlmo2(r, &m)); break;
    case Family::kPhiMoe: L2S_RETURN_IF_ERROR(ReadPhiMoe(r, &m)); break;
    case Family::kGraniteMoe: L2S_RETURN_IF_ERROR(ReadGraniteMoe(r, &m)); break;
    case Family::kErnie: L2S_RETURN_IF_ERROR(ReadErnie(r, false, &m)); break;
    case Family::kErnieMoe: L2S_RETURN_IF_ERROR(ReadErnie(r, true, &m)); break;
    case Family::kGlm: L2S_RETURN_IF_ERROR(ReadGlmDense(r, false, &m)); break;
    case Family::kGlm4: L2S_RETURN_IF_ERROR(ReadGlmDense(r, true, &m)); break;
    case Family::kSeedOss: L2S_RETURN_IF_ERROR(ReadSeedOss(r, &m)); break;
    case Family::kCohere: L2S_RETURN_IF_ERROR(ReadCohere(r, false, &m)); break;
    case Family::kCohere2: L2S_RETURN_IF_ERROR(ReadCohere(r, true, &m)); break;
    case Family::kDots1: L2S_RETURN_IF_ERROR(ReadDots1(r, &m)); break;
    case Family::kGraniteMoeHybrid: L2S_RETURN_IF_ERROR(ReadGraniteMoeHybrid(r, &m)); break;
  }
  L2S_RETURN_IF_ERROR(ReadQuantization(top, &m));
  for (const char* tower : {"vision_config", "audio_config"})
    if (const json* t = top.Find(tower); t != nullptr && t->is_object()) m.vision_tower = true;
  // The class the engines look up (their registries key on architectures[0]). A
  // *ForConditionalGeneration class is a multimodal wrapper even where the tower's config was
  // left out of the file.
  if (const json* a = top.Find("architectures");
      a != nullptr && a->is_array() && !a->empty() && (*a)[0].is_string())
    m.hf_class = (*a)[0].get<std::string>();
  constexpr std::string_view kWrapperSuffix = "ForConditionalGeneration";
  if (m.hf_class.size() > kWrapperSuffix.size() && m.hf_class.ends_with(kWrapperSuffix))
    m.vision_tower = true;
  // Safety net: every invariant downstream code relies on (messages name the ModelSpec field).
  Status valid = ValidateModelSpec(m);
  if (!valid.ok())
    return Status::InvalidArgument(fmt::format("{}: {}", source_name, valid.message()));
  return m;
}

Status ApplyHfQuantConfig(std::string_view json_text, std::string_view source_name,
                          ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(json root, jsonio::Parse(json_text, source_name));
  if (!root.is_object())
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object at the top level, got {}",
                                               source_name, jsonio::Snippet(root)));
  ObjectReader top(root, source_name);
  const json* q = top.Find("quantization");
  if (q == nullptr || !q->is_object())
    return top.Error("quantization", "an object with quant_algo", q);
  ObjectReader qr(*q, source_name, "quantization.");
  L2S_RETURN_IF_ERROR(ApplyModeloptAlgo(qr, "quant_algo", m));
  return ReadUnquantizedModules(qr, "exclude_modules", m);
}

StatusOr<ModelSpec> LoadHfConfig(const std::string& path) {
  L2S_ASSIGN_OR_RETURN(std::string text, jsonio::ReadFile(path));
  return ParseHfConfig(text, path);
}

}  // namespace l2s
