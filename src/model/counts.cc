#include "model/counts.h"

#include <algorithm>

namespace l2s {
namespace {

// Weight matrices of one layer's attention (no biases, sinks or norms).
int64_t AttentionMatrices(const ModelSpec& m) {
  const int64_t h = m.hidden_size;
  const int64_t heads = m.num_heads;
  if (m.attention == AttentionKind::kMla) {
    const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const int64_t q = m.q_lora_rank > 0
                          ? h * m.q_lora_rank + int64_t{m.q_lora_rank} * heads * qk  // q_a, q_b
                          : h * heads * qk;                                          // q_proj
    const int64_t kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim);  // kv_a_proj_with_mqa
    const int64_t kv_b =
        int64_t{m.kv_lora_rank} * heads * (m.qk_nope_head_dim + m.v_head_dim);  // kv_b_proj
    const int64_t o = heads * m.v_head_dim * h;
    return q + kv_a + kv_b + o;
  }
  const int64_t q = h * heads * m.head_dim;
  const int64_t kv = 2 * h * m.num_kv_heads * m.head_dim;
  const int64_t o = heads * m.head_dim * h;
  return q + kv + o;
}

// Biases and sinks of one layer's attention.
int64_t AttentionExtras(const ModelSpec& m) {
  int64_t n = m.attention_sinks ? m.num_heads : 0;
  if (m.attention == AttentionKind::kMla) {
    // DeepseekV3Attention: attention_bias applies to q_a_proj (or q_proj), kv_a_proj_with_mqa
    // and o_proj.
    if (m.attention_bias)
      n += (m.q_lora_rank > 0 ? m.q_lora_rank
                              : int64_t{m.num_heads} * (m.qk_nope_head_dim + m.qk_rope_head_dim)) +
           (m.kv_lora_rank + m.qk_rope_head_dim) + m.hidden_size;
    return n;
  }
  const int64_t qkv = int64_t{m.num_heads} * m.head_dim + 2 * int64_t{m.num_kv_heads} * m.head_dim;
  if (m.attention_bias) n += qkv + m.hidden_size;
  else if (m.qkv_bias) n += qkv;
  return n;
}

int64_t FfnMatrices(const ModelSpec& m, int64_t ffn) {
  return (m.gated_ffn ? 3 : 2) * m.hidden_size * ffn;
}
int64_t FfnBiases(const ModelSpec& m, int64_t ffn) {
  return (m.gated_ffn ? 2 : 1) * ffn + m.hidden_size;
}
int64_t DenseLayerFfn(const ModelSpec& m) {
  return FfnMatrices(m, m.dense_ffn_size) + (m.dense_ffn_bias ? FfnBiases(m, m.dense_ffn_size) : 0);
}
int64_t SharedExperts(const ModelSpec& m) {
  return m.num_shared_experts * FfnMatrices(m, m.shared_ffn_size);
}
int64_t Router(const ModelSpec& m) {
  return m.hidden_size * m.num_experts + (m.router_bias ? m.num_experts : 0);
}
int64_t FinalNorm(const ModelSpec& m) { return (m.layernorm_bias ? 2 : 1) * m.hidden_size; }

// Mean over query positions i = 1..L of the keys attended, min(i, window) (window 0 = none).
double MeanPrefillKeys(int64_t len, int window) {
  const double l = static_cast<double>(len);
  if (window <= 0 || window >= len) return (l + 1.0) / 2.0;
  const double w = window;
  return (w * (w + 1.0) / 2.0 + (l - w) * w) / l;
}

// Attention score + value FLOPs per key, one layer.
double AttentionFlopsPerKey(const ModelSpec& m, bool decode) {
  const double heads = m.num_heads;
  if (m.attention == AttentionKind::kMla) {
    if (decode) return 2.0 * heads * (2.0 * m.kv_lora_rank + m.qk_rope_head_dim);
    return 2.0 * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  }
  return 4.0 * heads * m.head_dim;
}

// Weight-matrix multiply-adds of one token (see counts.h).
double MatmulWeightsPerToken(const ModelSpec& m) {
  const int moe = m.num_moe_layers();
  const int dense = m.num_layers - moe;
  double w = static_cast<double>(m.num_layers) * static_cast<double>(AttentionMatrices(m));
  w += dense * static_cast<double>(FfnMatrices(m, m.dense_ffn_size));
  if (m.is_moe()) {
    w += moe * (static_cast<double>(m.hidden_size) * m.num_experts +  // router
                static_cast<double>(SharedExperts(m)) +
                static_cast<double>(m.experts_per_token) *
                    static_cast<double>(FfnMatrices(m, m.expert_ffn_size)));
  }
  w += static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);  // lm_head matmul
  return w;
}

}  // namespace

int64_t AttentionParamsPerLayer(const ModelSpec& m) {
  return AttentionMatrices(m) + AttentionExtras(m);
}

int64_t ExpertParams(const ModelSpec& m) {
  if (!m.is_moe()) return 0;
  return FfnMatrices(m, m.expert_ffn_size) + (m.expert_bias ? FfnBiases(m, m.expert_ffn_size) : 0);
}

int64_t NormParamsPerLayer(const ModelSpec& m) {
  int64_t n = (m.layernorm_bias ? 2 : 1) * 2 * m.hidden_size;  // input + post-attention
  if (m.qk_norm) n += 2 * int64_t{m.head_dim};
  if (m.attention == AttentionKind::kMla) n += m.q_lora_rank + m.kv_lora_rank;
  return n;
}

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  const int64_t moe = m.num_moe_layers();
  const int64_t dense = m.num_layers - moe;
  c.embedding = m.vocab_size * m.hidden_size;
  c.lm_head = m.tied_embeddings ? 0 : m.vocab_size * m.hidden_size;
  c.attention = m.num_layers * AttentionParamsPerLayer(m);
  c.dense_ffn = dense * DenseLayerFfn(m);
  if (m.is_moe()) {
    c.routed_experts = moe * m.num_experts * ExpertParams(m);
    c.shared_experts = moe * SharedExperts(m);
    c.routers = moe * Router(m);
  }
  c.norms = m.num_layers * NormParamsPerLayer(m) + FinalNorm(m);
  c.total = c.embedding + c.lm_head + c.attention + c.dense_ffn + c.routed_experts +
            c.shared_experts + c.routers + c.norms;
  c.active = c.total - c.routed_experts + moe * m.experts_per_token * ExpertParams(m);
  if (m.mtp_layers > 0) {
    const int64_t h = m.hidden_size;
    const int64_t block = AttentionParamsPerLayer(m) + NormParamsPerLayer(m) +
                          (m.is_moe() ? m.num_experts * ExpertParams(m) + SharedExperts(m) +
                                            Router(m)
                                      : DenseLayerFfn(m));
    const int64_t glue = 2 * h * h + 3 * h;  // eh_proj; enorm, hnorm, shared_head.norm
    const int64_t copies = c.embedding + (m.tied_embeddings ? 0 : m.vocab_size * h);
    c.mtp = m.mtp_layers * (block + glue + copies);
  }
  return c;
}

double KvBytesPerTokenPerLayer(const ModelSpec& m, DType kv) {
  const double elems = m.attention == AttentionKind::kMla
                           ? static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim)
                           : 2.0 * m.num_kv_heads * m.head_dim;
  return elems * BytesPerElement(kv);
}

double KvBytesForSequence(const ModelSpec& m, DType kv, int64_t context) {
  if (context <= 0) return 0.0;
  const double per_layer = KvBytesPerTokenPerLayer(m, kv);
  double tokens = 0;  // sum over layers of the tokens each layer keeps
  for (const LayerSpec& l : m.layers)
    tokens += static_cast<double>(l.window > 0 ? std::min<int64_t>(context, l.window) : context);
  return per_layer * tokens;
}

double KvBytesPerToken(const ModelSpec& m, DType kv) {
  return KvBytesPerTokenPerLayer(m, kv) * m.num_layers;
}

double WeightBytes(const ModelSpec& m, DType weight) {
  const ParamCounts c = CountParams(m);
  const int64_t moe = m.num_moe_layers();
  const int64_t dense = m.num_layers - moe;
  // Matrices stored in the checkpoint's weight format.
  double quant = static_cast<double>(dense) * static_cast<double>(FfnMatrices(m, m.dense_ffn_size));
  if (m.is_moe())
    quant += static_cast<double>(moe) *
             (static_cast<double>(m.num_experts) *
                  static_cast<double>(FfnMatrices(m, m.expert_ffn_size)) +
              static_cast<double>(SharedExperts(m)));
  if (!m.attention_unquantized)
    quant += static_cast<double>(m.num_layers) * static_cast<double>(AttentionMatrices(m));
  const double rest = static_cast<double>(c.total) - quant;  // kept in bf16
  return quant * BytesPerElement(weight) + rest * BytesPerElement(DType::kBF16);
}

double FlopsPerTokenPrefill(const ModelSpec& m, int64_t prompt_len) {
  if (prompt_len <= 0) return 0.0;
  double attn = 0;
  for (const LayerSpec& l : m.layers) attn += MeanPrefillKeys(prompt_len, l.window);
  return 2.0 * MatmulWeightsPerToken(m) + AttentionFlopsPerKey(m, /*decode=*/false) * attn;
}

double FlopsPerTokenDecode(const ModelSpec& m, int64_t context) {
  if (context <= 0) return 0.0;
  double keys = 0;
  for (const LayerSpec& l : m.layers)
    keys += static_cast<double>(l.window > 0 ? std::min<int64_t>(context, l.window) : context);
  return 2.0 * MatmulWeightsPerToken(m) + AttentionFlopsPerKey(m, /*decode=*/true) * keys;
}

}  // namespace l2s
