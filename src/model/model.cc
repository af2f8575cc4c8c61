#include "model/model.h"

#include <fmt/core.h>

namespace l2s {

int ModelSpec::num_moe_layers() const {
  int n = 0;
  for (const LayerSpec& l : layers) n += l.ffn == FfnKind::kMoe ? 1 : 0;
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
  if (m.layers.size() != static_cast<size_t>(m.num_layers))
    return Bad(m, "layers", fmt::format("num_layers ({}) entries", m.num_layers),
               static_cast<int64_t>(m.layers.size()));
  bool any_dense = false;
  bool any_moe = false;
  for (const LayerSpec& l : m.layers) {
    any_dense |= l.ffn == FfnKind::kDense;
    any_moe |= l.ffn == FfnKind::kMoe;
    check("layers[].window", l.window, 0, L::kMaxWindow);
  }
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
