// Readers of the transformer families: attention (GQA, MLA, sliding windows) with dense or MoE
// feed-forward layers.
// Part of the HuggingFace config reader (hf_config.h); declarations in hf_readers.h.

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include "model/hf_readers.h"

namespace l2s::hf {

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

Status ReadQwen3Moe(const ObjectReader& r, ModelSpec* m) {
  L2S_RETURN_IF_ERROR(ReadGqaAndBias(r, m));
  m->qk_norm = true;
  L2S_RETURN_IF_ERROR(ReadQwenSparseLayout(r, /*gated_shared=*/false, m));
  return ReadQwenWindows(r, m);
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

}  // namespace l2s::hf
