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
// quantization_config.quant_method: fp8 / fbgemm_fp8 -> weight_dtype fp8; mxfp4 -> fp4, and
// modules_to_not_convert naming self_attn -> attention_unquantized (attention, router, embeddings
// and lm_head stay bf16). Any other method is Unsupported. torch_dtype is not read: weights are
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
                    kGptOss, kLlama4 };

struct FamilyName {
  const char* model_type;
  Family family;
};
constexpr std::array<FamilyName, 11> kFamilies = {{
    {"llama", Family::kLlama},
    {"mistral", Family::kMistral},
    {"mixtral", Family::kMixtral},
    {"qwen2", Family::kQwen2},
    {"qwen3", Family::kQwen3},
    {"qwen3_moe", Family::kQwen3Moe},
    {"deepseek_v3", Family::kDeepseekV3},
    {"kimi_k2", Family::kDeepseekV3},  // Kimi K2 is the DeepSeek-V3 architecture
    {"gpt_oss", Family::kGptOss},
    {"llama4", Family::kLlama4},
    {"llama4_text", Family::kLlama4},  // the text tower's own config (fields at the top level)
}};

std::string SupportedList() {
  std::string s;
  for (const FamilyName& f : kFamilies) {
    if (!s.empty()) s += ", ";
    s += f.model_type;
  }
  return s;
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
Status ReadCommon(const ObjectReader& r, ModelSpec* m) {
  L2S_ASSIGN_OR_RETURN(int64_t layers, r.Int("num_hidden_layers", 1, L::kMaxLayers));
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
    L2S_ASSIGN_OR_RETURN(int64_t w, r.IntOr("sliding_window", 0, 1, L::kMaxWindow));
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
  L2S_ASSIGN_OR_RETURN(int64_t w, r.IntOr("sliding_window", 0, 1, L::kMaxWindow));
  for (LayerSpec& l : m->layers) l.window = static_cast<int>(w);
  return Status::Ok();
}

Status ReadQwen3Moe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
  m->qk_norm = true;
  L2S_RETURN_IF_ERROR(
      ReadExperts(r, "num_experts", "num_experts_per_tok", "moe_intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t step, r.IntOr("decoder_sparse_step", 1, 1, L::kMaxLayers));
  std::vector<bool> mlp_only;
  L2S_RETURN_IF_ERROR(ReadLayerIndexList(r, "mlp_only_layers", m->num_layers, &mlp_only));
  for (int i = 0; i < m->num_layers; ++i) {
    const bool moe = !mlp_only[i] && (i + 1) % step == 0;
    m->layers[i].ffn = moe ? FfnKind::kMoe : FfnKind::kDense;
  }
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  return ReadQwenWindows(r, m);
}

Status ReadDeepseekV3(const ObjectReader& r, ModelSpec* m) {
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
  L2S_RETURN_IF_ERROR(ReadDenseFfn(r, "intermediate_size", m));
  L2S_ASSIGN_OR_RETURN(int64_t mtp, r.IntOr("num_nextn_predict_layers", 0, 0, L::kMaxMtpLayers));
  m->mtp_layers = static_cast<int>(mtp);
  return Status::Ok();
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
  L2S_RETURN_IF_ERROR(ReadGqaHeads(r, m));
  L2S_ASSIGN_OR_RETURN(m->attention_bias, r.BoolOr("attention_bias", false));
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

Status ReadQuantization(const ObjectReader& top, ModelSpec* m) {
  const json* qc = top.Find("quantization_config");
  if (qc == nullptr) return Status::Ok();
  if (!qc->is_object()) return top.Error("quantization_config", "an object", qc);
  ObjectReader q(*qc, top.source(), "quantization_config.");
  L2S_ASSIGN_OR_RETURN(std::string method, q.String("quant_method"));
  if (method == "fp8" || method == "fbgemm_fp8") {
    m->weight_dtype = DType::kFP8;
  } else if (method == "mxfp4") {
    m->weight_dtype = DType::kFP4;
  } else {
    return Status::Unsupported(fmt::format(
        "{}: field \"quantization_config.quant_method\": expected one of fp8, fbgemm_fp8, "
        "mxfp4, got {}",
        top.source(), jsonio::Snippet(*q.Find("quant_method"))));
  }
  if (const json* keep = q.Find("modules_to_not_convert")) {
    const char* what = "a list of module name patterns";
    if (!keep->is_array()) return q.Error("modules_to_not_convert", what, keep);
    for (const json& e : *keep) {
      if (!e.is_string()) return q.Error("modules_to_not_convert", what, &e);
      if (e.get_ref<const std::string&>().find("self_attn") != std::string::npos)
        m->attention_unquantized = true;
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name) {
  L2S_ASSIGN_OR_RETURN(json root, jsonio::Parse(json_text, source_name));
  if (!root.is_object())
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object at the top level, got {}",
                                               source_name, jsonio::Snippet(root)));
  ObjectReader top(root, source_name);
  L2S_ASSIGN_OR_RETURN(std::string model_type, top.String("model_type"));
  const auto fam = std::find_if(kFamilies.begin(), kFamilies.end(), [&](const FamilyName& f) {
    return model_type == f.model_type;
  });
  if (fam == kFamilies.end())
    return Status::Unsupported(
        fmt::format("{}: field \"model_type\": unsupported architecture {}; expected one of {}",
                    source_name, jsonio::Snippet(*top.Find("model_type")), SupportedList()));

  ModelSpec m;
  m.name = std::string(source_name);
  m.architecture = model_type == "llama4_text" ? "llama4" : model_type;

  // Llama 4 (multimodal) keeps the language model's fields under text_config.
  const json* cfg = &root;
  std::string prefix;
  if (model_type == "llama4") {
    cfg = top.Find("text_config");
    if (cfg == nullptr || !cfg->is_object())
      return top.Error("text_config", "an object with the language model's fields", cfg);
    prefix = "text_config.";
  }
  ObjectReader r(*cfg, source_name, prefix);
  L2S_RETURN_IF_ERROR(ReadCommon(r, &m));

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
  }
  L2S_RETURN_IF_ERROR(ReadQuantization(top, &m));
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
