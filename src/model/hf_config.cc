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
#include "model/hf_readers.h"

namespace l2s {

using namespace hf;  // NOLINT: the readers and Family of this library's own reader files

namespace {

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

StatusOr<ModelSpec> LoadHfConfig(const std::string& path) {
  L2S_ASSIGN_OR_RETURN(std::string text, jsonio::ReadFile(path));
  return ParseHfConfig(text, path);
}

}  // namespace l2s
