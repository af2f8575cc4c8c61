#include "model/model.h"

#include <fmt/core.h>

#include <algorithm>

#include <vector>

namespace l2s {

const char* MixerName(Mixer k) {
  switch (k) {
    case Mixer::kAttention: return "attention";
    case Mixer::kSparse: return "sparse";
    case Mixer::kLinear: return "linear";
    case Mixer::kMamba: return "mamba";
    case Mixer::kNone: return "none";
  }
  return "?";
}

const char* FfnKindName(FfnKind k) {
  switch (k) {
    case FfnKind::kDense: return "dense";
    case FfnKind::kMoe: return "moe";
    case FfnKind::kNone: return "none";
  }
  return "?";
}

LayerSpec DraftLayerOf(const ModelSpec& m) {
  LayerSpec l{FfnKind::kDense, 0};
  l.ffn_size = m.draft_ffn > 0         ? m.draft_ffn
               : m.dense_ffn_size > 0 ? m.dense_ffn_size
                                      : int64_t{m.experts_per_token} * m.expert_ffn_size +
                                            int64_t{m.num_shared_experts} * m.shared_ffn_size;
  return l;
}

ModelSpec DraftSpecOf(const ModelSpec& m) {
  if (m.draft_heads <= 0) return m;
  ModelSpec d = m;
  d.attention = AttentionKind::kGqa;
  d.num_heads = m.draft_heads;
  d.num_kv_heads = m.draft_kv_heads;
  d.head_dim = m.draft_head_dim;
  d.attention_bias = d.qkv_bias = d.attention_sinks = d.qk_norm = d.qk_norm_full = false;
  d.gated_attention = false;
  d.o_groups = 0;  // DeepSeek-V4's compressed KV is the model's, not the draft's
  return d;
}

int64_t DraftVocabOf(const ModelSpec& m) {
  return m.draft_vocab > 0 ? m.draft_vocab : std::min(m.vocab_size, kDraftVocab);
}

Status AttachDraftModel(const std::string& id, ModelSpec* m) {
  if (id.empty()) return Status::InvalidArgument("--draft-model: expected a model id or folder");
  const size_t bad =
      id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@+~");
  if (bad != std::string::npos)
    return Status::InvalidArgument(fmt::format(
        "--draft-model \"{}\": character '{}' is not allowed in a model id or folder the launch "
        "commands load (letters, digits and ._-/:@+~)",
        id, id[bad]));
  if (m->mtp_layers > 0)
    return Status::InvalidArgument(fmt::format(
        "--draft-model {}: model '{}' has {} MTP layer{} of its own, which the engines draft with "
        "(--mtp K); a draft model is for models without",
        id, m->name, m->mtp_layers, m->mtp_layers == 1 ? "" : "s"));
  if (m->num_heads <= 0)
    return Status::InvalidArgument(fmt::format(
        "--draft-model {}: model '{}' has no attention heads for a draft decoder layer to take",
        id, m->name));
  m->draft_model = id;
  return Status::Ok();
}

int ModelSpec::num_moe_layers() const {
  int n = 0;
  for (const LayerSpec& l : layers) n += l.ffn == FfnKind::kMoe ? 1 : 0;
  return n;
}

int ModelSpec::num_dense_layers() const {
  int n = 0;
  for (const LayerSpec& l : layers) n += l.ffn == FfnKind::kDense ? 1 : 0;
  return n;
}

int ModelSpec::num_mixer_layers(Mixer k) const {
  int n = 0;
  for (const LayerSpec& l : layers) n += l.mixer == k ? 1 : 0;
  return n;
}

namespace {

// One-line error naming the model and the field.
Status Bad(const ModelSpec& m, std::string_view field, std::string_view expected, int64_t got) {
  return Status::InvalidArgument(fmt::format("model \"{}\": field \"{}\": expected {}, got {}",
                                             m.name, field, expected, got));
}

Status InRange(const ModelSpec& m, std::string_view field, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return Bad(m, field, fmt::format("an integer in [{}, {}]", lo, hi), v);
}

}  // namespace

Status ValidateModelSpec(const ModelSpec& m) {
  using L = ModelLimits;
  Status s;
  auto check = [&](std::string_view f, int64_t v, int64_t lo, int64_t hi) {
    if (s.ok()) s = InRange(m, f, v, lo, hi);
  };
  check("num_layers", m.num_layers, 1, L::kMaxLayers);
  check("hidden_size", m.hidden_size, 1, L::kMaxHidden);
  check("vocab_size", m.vocab_size, 1, L::kMaxVocab);
  check("num_heads", m.num_heads, 1, L::kMaxHeads);
  check("num_kv_heads", m.num_kv_heads, 1, m.num_heads);
  check("head_dim", m.head_dim, 1, L::kMaxHeadDim);
  check("dense_ffn_size", m.dense_ffn_size, 0, L::kMaxFfn);
  check("num_experts", m.num_experts, 0, L::kMaxExperts);
  check("mtp_layers", m.mtp_layers, 0, L::kMaxMtpLayers);
  check("max_context", m.max_context, 0, int64_t{1} << 40);
  if (!s.ok()) return s;
  if (m.num_heads % m.num_kv_heads != 0)
    return Bad(m, "num_kv_heads", fmt::format("a divisor of num_heads ({})", m.num_heads),
               m.num_kv_heads);
  if (m.attention == AttentionKind::kMla) {
    check("kv_lora_rank", m.kv_lora_rank, 1, L::kMaxLoraRank);
    check("q_lora_rank", m.q_lora_rank, 0, L::kMaxLoraRank);
    check("qk_nope_head_dim", m.qk_nope_head_dim, 0, L::kMaxHeadDim);
    check("qk_rope_head_dim", m.qk_rope_head_dim, 0, L::kMaxHeadDim);
    check("v_head_dim", m.v_head_dim, 1, L::kMaxHeadDim);
    if (!s.ok()) return s;
    if (m.num_kv_heads != m.num_heads)
      return Bad(m, "num_kv_heads", fmt::format("num_heads ({}) for MLA", m.num_heads),
                 m.num_kv_heads);
    if (m.head_dim != m.qk_nope_head_dim + m.qk_rope_head_dim)
      return Bad(m, "head_dim",
                 fmt::format("qk_nope_head_dim + qk_rope_head_dim ({}) for MLA",
                             m.qk_nope_head_dim + m.qk_rope_head_dim),
                 m.head_dim);
  }
  if (m.compressed_kv()) {
    if (m.attention != AttentionKind::kMla)
      return Bad(m, "attention", "MLA for DeepSeek-V4 attention (o_groups > 0)",
                 static_cast<int>(m.attention));
    check("o_lora_rank", m.o_lora_rank, 1, L::kMaxLoraRank);
    check("o_groups", m.o_groups, 1, m.num_heads);
    check("hc_mult", m.hc_mult, 1, 64);
    check("num_hash_layers", m.num_hash_layers, 0, m.num_layers);
    if (!s.ok()) return s;
    if (m.num_heads % m.o_groups != 0)
      return Bad(m, "o_groups", fmt::format("a divisor of num_heads ({})", m.num_heads),
                 m.o_groups);
  }
  if (m.layers.size() != static_cast<size_t>(m.num_layers))
    return Bad(m, "layers", fmt::format("num_layers ({}) entries", m.num_layers),
               static_cast<int64_t>(m.layers.size()));
  bool any_dense = false;
  bool any_moe = false;
  std::vector<const LayerSpec*> kinds;
  for (const LayerSpec& l : m.layers) {
    any_dense |= l.ffn == FfnKind::kDense && l.ffn_size == 0;
    any_moe |= l.ffn == FfnKind::kMoe;
    check("layers[].window", l.window, 0, L::kMaxWindow);
    check("layers[].kv_heads", l.kv_heads, 0, m.num_heads);
    check("layers[].head_dim", l.head_dim, 0, L::kMaxHeadDim);
    check("layers[].ffn_size", l.ffn_size, 0, L::kMaxFfn);
    if (!s.ok()) return s;
    if (l.kv_heads > 0 && m.num_heads % l.kv_heads != 0)
      return Bad(m, "layers[].kv_heads", fmt::format("a divisor of num_heads ({})", m.num_heads),
                 l.kv_heads);
    if (l.attn_linear && l.mixer != Mixer::kNone)
      return Bad(m, "layers[].attn_linear", "a layer without another mixer", 1);
    if (l.ffn_linear && l.ffn != FfnKind::kNone)
      return Bad(m, "layers[].ffn_linear", "a layer without another FFN", 1);
    check("layers[].compress_ratio", l.compress_ratio, 0, m.compressed_kv() ? 1 << 16 : 0);
    if (!s.ok()) return s;
    if (l.window > 0 && l.mixer != Mixer::kAttention &&
        !(l.compress_ratio > 0 && l.mixer == Mixer::kSparse))
      return Bad(m, "layers[].window", "0 on layers without softmax attention", l.window);
    bool seen = false;
    for (const LayerSpec* k : kinds) seen |= *k == l;
    if (!seen) kinds.push_back(&l);
  }
  if (kinds.size() > static_cast<size_t>(L::kMaxLayerKinds))
    return Bad(m, "layers", fmt::format("at most {} distinct layer shapes", L::kMaxLayerKinds),
               static_cast<int64_t>(kinds.size()));
  if (m.num_mixer_layers(Mixer::kSparse) > 0) {
    if (m.attention != AttentionKind::kMla)
      return Bad(m, "attention", "MLA for sparse (DSA) layers", static_cast<int>(m.attention));
    check("index_topk", m.index_topk, 1, L::kMaxWindow);
    check("index_heads", m.index_heads, 1, L::kMaxHeads);
    check("index_head_dim", m.index_head_dim, 1, L::kMaxHeadDim);
  }
  if (m.num_mixer_layers(Mixer::kLinear) > 0) {
    check("linear_key_heads", m.linear_key_heads, 1, L::kMaxHeads);
    check("linear_value_heads", m.linear_value_heads, 1, L::kMaxHeads);
    check("linear_key_dim", m.linear_key_dim, 1, L::kMaxState);
    check("linear_value_dim", m.linear_value_dim, 1, L::kMaxState);
    check("linear_conv_kernel", m.linear_conv_kernel, 1, 64);
    if (s.ok() && m.linear_value_heads % m.linear_key_heads != 0)
      return Bad(m, "linear_key_heads",
                 fmt::format("a divisor of linear_value_heads ({})", m.linear_value_heads),
                 m.linear_key_heads);
  }
  if (m.num_mixer_layers(Mixer::kMamba) > 0) {
    check("mamba_version", m.mamba_version, 1, 2);
    check("mamba_heads", m.mamba_heads, 1, 4 * L::kMaxHidden);
    check("mamba_head_dim", m.mamba_head_dim, 1, L::kMaxHeadDim);
    check("mamba_state", m.mamba_state, 1, L::kMaxState);
    check("mamba_groups", m.mamba_groups, 1, m.mamba_heads);
    check("mamba_conv_kernel", m.mamba_conv_kernel, 1, 64);
    check("mamba_chunk", m.mamba_chunk, 0, 1 << 16);
    if (m.mamba_version == 1) check("mamba_dt_rank", m.mamba_dt_rank, 1, L::kMaxHidden);
  }
  check("norms_per_sublayer", m.norms_per_sublayer, 1, 4);
  check("num_zero_experts", m.num_zero_experts, 0, L::kMaxExperts);
  check("moe_latent_size", m.moe_latent_size, 0, L::kMaxHidden);
  check("misc_params_per_layer", m.misc_params_per_layer, 0, int64_t{1} << 32);
  check("misc_params_per_moe_layer", m.misc_params_per_moe_layer, 0, int64_t{1} << 32);
  if (!s.ok()) return s;
  if (any_dense) check("dense_ffn_size", m.dense_ffn_size, 1, L::kMaxFfn);
  if (m.num_experts > 0) {
    check("experts_per_token", m.experts_per_token, 1, m.num_experts);
    check("expert_ffn_size", m.expert_ffn_size, 1, L::kMaxFfn);
    check("num_shared_experts", m.num_shared_experts, 0, L::kMaxSharedExperts);
    check("shared_ffn_size", m.shared_ffn_size, m.num_shared_experts > 0 ? 1 : 0, L::kMaxFfn);
  } else {
    if (any_moe && s.ok()) return Bad(m, "num_experts", "a positive count for MoE layers", 0);
    check("experts_per_token", m.experts_per_token, 0, 0);
    check("num_shared_experts", m.num_shared_experts, 0, 0);
  }
  return s;
}

}  // namespace l2s
