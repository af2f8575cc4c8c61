#include "model/counts.h"

#include <algorithm>
#include <cmath>

namespace l2s {
namespace {

bool HasSoftmax(const LayerSpec& l) {
  return l.mixer == Mixer::kAttention || l.mixer == Mixer::kSparse;
}
bool HasIndexer(const LayerSpec& l) { return l.mixer == Mixer::kSparse && !l.shared_indexer; }
bool IsRecurrent(const LayerSpec& l) {
  return l.mixer == Mixer::kLinear || l.mixer == Mixer::kMamba;
}

// The layer every model-wide "per layer" helper below describes: full attention, dense FFN.
LayerSpec DefaultLayer() { return LayerSpec{}; }

// DSA indexer matrices (DeepSeek-V3.2 / GLM-5): wq_b [q_lora (or hidden), heads*dim],
// wk [hidden, dim], weights_proj [hidden, heads].
int64_t IndexerMatrices(const ModelSpec& m) {
  const int64_t h = m.hidden_size;
  const int64_t q_in = m.q_lora_rank > 0 ? m.q_lora_rank : h;
  return q_in * m.index_heads * m.index_head_dim + h * m.index_head_dim + h * m.index_heads;
}

// DeepSeek-V4 KV compressor of width `dim` at ratio r: wkv and wgate [hidden, coff * dim], with
// coff = 2 at ratio 4 (overlapping windows), else 1.
int64_t CompressorCoff(const LayerSpec& l) { return l.compress_ratio == 4 ? 2 : 1; }

// DeepSeek-V4 attention matrices of one layer (inference/model.py Attention): wq_a [h, q_lora],
// wq_b [q_lora, H hd], wkv [h, hd], wo_a [H hd / G, G o_lora] (grouped), wo_b [G o_lora, h];
// compressed layers a compressor; ratio-4 layers an indexer: wq_b [q_lora, IH IhD],
// weights_proj [h, IH] and its own compressor of width IhD.
int64_t V4Matrices(const ModelSpec& m, const LayerSpec& l) {
  const int64_t h = m.hidden_size, H = m.num_heads, hd = m.head_dim, qr = m.q_lora_rank;
  const int64_t orank = m.o_lora_rank;
  int64_t n = h * qr + qr * H * hd + h * hd + H * hd * orank + m.o_groups * orank * h;
  if (l.compress_ratio > 0) n += 2 * h * CompressorCoff(l) * hd;
  if (HasIndexer(l))
    n += qr * m.index_heads * m.index_head_dim + h * m.index_heads +
         2 * h * CompressorCoff(l) * m.index_head_dim;
  return n;
}

// Softmax-attention weight matrices of one layer (no biases, sinks or norms).
int64_t SoftmaxMatrices(const ModelSpec& m, const LayerSpec& l) {
  const int64_t h = m.hidden_size;
  const int64_t heads = m.num_heads;
  int64_t n = 0;
  if (m.compressed_kv()) return V4Matrices(m, l);
  if (m.attention == AttentionKind::kMla) {
    const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const int64_t q = m.q_lora_rank > 0
                          ? h * m.q_lora_rank + int64_t{m.q_lora_rank} * heads * qk  // q_a, q_b
                          : h * heads * qk;                                          // q_proj
    const int64_t kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim);  // kv_a_proj_with_mqa
    const int64_t kv_b =
        int64_t{m.kv_lora_rank} * heads * (m.qk_nope_head_dim + m.v_head_dim);  // kv_b_proj
    const int64_t o = heads * m.v_head_dim * h;
    n = q + kv_a + kv_b + o;
  } else {
    const int64_t hd = m.head_dim_of(l);
    const int64_t kvh = m.kv_heads_of(l);
    const int64_t q = h * heads * hd * (m.gated_attention ? 2 : 1);  // + output gate
    const int64_t kv = (l.k_eq_v ? 1 : 2) * h * kvh * hd;
    const int64_t o = heads * hd * h;
    n = q + kv + o;
  }
  if (HasIndexer(l)) n += IndexerMatrices(m);
  return n;
}

// Gated DeltaNet (Qwen3NextGatedDeltaNet): in_proj_qkvz [h, 2 kd + 2 vd], in_proj_ba
// [h, 2 v_heads], out_proj [vd, h]; kd = key heads x key dim, vd = value heads x value dim.
int64_t LinearMatrices(const ModelSpec& m) {
  const int64_t h = m.hidden_size;
  const int64_t kd = int64_t{m.linear_key_heads} * m.linear_key_dim;
  const int64_t vd = int64_t{m.linear_value_heads} * m.linear_value_dim;
  return h * (2 * kd + 2 * vd) + h * 2 * m.linear_value_heads + vd * h;
}
int64_t LinearConvDim(const ModelSpec& m) {
  return 2 * int64_t{m.linear_key_heads} * m.linear_key_dim +
         int64_t{m.linear_value_heads} * m.linear_value_dim;
}

int64_t MambaInner(const ModelSpec& m) { return int64_t{m.mamba_heads} * m.mamba_head_dim; }
// Channels the Mamba conv runs over: x (v1); x, B and C (v2).
int64_t MambaConvDim(const ModelSpec& m) {
  return MambaInner(m) +
         (m.mamba_version == 2 ? 2 * int64_t{m.mamba_groups} * m.mamba_state : 0);
}
// Mamba2 (NemotronHMamba2Mixer): in_proj [h, 2 inner + 2 groups state + heads] (z, x, B, C, dt),
// out_proj [inner, h]. Mamba v1 (JambaMambaMixer): in_proj [h, 2 inner], x_proj
// [inner, dt_rank + 2 state], dt_proj [dt_rank, inner], out_proj [inner, h].
int64_t MambaInProjWidth(const ModelSpec& m) {
  return m.mamba_version == 2
             ? 2 * MambaInner(m) + 2 * int64_t{m.mamba_groups} * m.mamba_state + m.mamba_heads
             : 2 * MambaInner(m);
}
int64_t MambaMatrices(const ModelSpec& m) {
  const int64_t h = m.hidden_size, inner = MambaInner(m);
  int64_t n = h * MambaInProjWidth(m) + inner * h;
  if (m.mamba_version == 1)
    n += inner * (m.mamba_dt_rank + 2 * int64_t{m.mamba_state}) + int64_t{m.mamba_dt_rank} * inner;
  return n;
}

// Weight matrices of one layer's token mixer.
int64_t MixerMatrices(const ModelSpec& m, const LayerSpec& l) {
  switch (l.mixer) {
    case Mixer::kAttention:
    case Mixer::kSparse: return SoftmaxMatrices(m, l);
    case Mixer::kLinear: return LinearMatrices(m);
    case Mixer::kMamba: return MambaMatrices(m);
    case Mixer::kNone: return l.attn_linear ? m.hidden_size * m.hidden_size : 0;
  }
  return 0;
}

// A DeciLM linear-replacement FFN: one hidden x hidden matrix.
int64_t LinearFfn(const ModelSpec& m, const LayerSpec& l) {
  return l.ffn_linear ? m.hidden_size * m.hidden_size : 0;
}

// Biases, sinks, convolutions and per-head vectors of one layer's token mixer (not its norms).
int64_t MixerExtras(const ModelSpec& m, const LayerSpec& l) {
  if (l.mixer == Mixer::kLinear) {
    // conv1d weight [conv_dim, 1, K] (no bias), dt_bias and A_log per value head, the gated
    // RMSNorm's weight (value head dim).
    return LinearConvDim(m) * m.linear_conv_kernel + 2 * int64_t{m.linear_value_heads} +
           m.linear_value_dim;
  }
  if (l.mixer == Mixer::kMamba) {
    const int64_t inner = MambaInner(m), conv = MambaConvDim(m);
    int64_t n = conv * m.mamba_conv_kernel + (m.mamba_conv_bias ? conv : 0);
    if (m.mamba_proj_bias) n += MambaInProjWidth(m) + m.hidden_size;
    if (m.mamba_version == 2) {
      n += 3 * int64_t{m.mamba_heads} + inner;  // dt_bias, A_log, D per head; gated norm
    } else {
      // dt_proj bias, A_log [inner, state], D; Jamba's dt / B / C RMSNorms.
      n += inner + inner * m.mamba_state + inner + m.mamba_dt_rank + 2 * int64_t{m.mamba_state};
    }
    return n;
  }
  if (!HasSoftmax(l)) return 0;
  int64_t n = m.attention_sinks ? m.num_heads : 0;
  if (m.compressed_kv()) {
    // The compressors' positional biases (ape [r, coff * dim]).
    if (l.compress_ratio > 0) {
      const int64_t ape = int64_t{l.compress_ratio} * CompressorCoff(l);
      n += ape * m.head_dim + (HasIndexer(l) ? ape * m.index_head_dim : 0);
    }
    return n;
  }
  if (HasIndexer(l)) n += 2 * int64_t{m.index_head_dim};  // indexer k_norm (LayerNorm)
  if (m.attention == AttentionKind::kMla) {
    // DeepseekV3Attention: attention_bias applies to q_a_proj (or q_proj), kv_a_proj_with_mqa
    // and o_proj.
    if (m.attention_bias)
      n += (m.q_lora_rank > 0 ? m.q_lora_rank
                              : int64_t{m.num_heads} * (m.qk_nope_head_dim + m.qk_rope_head_dim)) +
           (m.kv_lora_rank + m.qk_rope_head_dim) + m.hidden_size;
    return n;
  }
  const int64_t hd = m.head_dim_of(l);
  const int64_t qkv = int64_t{m.num_heads} * hd * (m.gated_attention ? 2 : 1) +
                      (l.k_eq_v ? 1 : 2) * int64_t{m.kv_heads_of(l)} * hd;
  if (m.attention_bias) n += qkv + m.hidden_size;
  else if (m.qkv_bias) n += qkv;
  return n;
}

int64_t FfnMatrices(const ModelSpec& m, int64_t width, int64_t ffn) {
  return (m.gated_ffn ? 3 : 2) * width * ffn;
}
int64_t FfnBiases(const ModelSpec& m, int64_t width, int64_t ffn) {
  return (m.gated_ffn ? 2 : 1) * ffn + width;
}
int64_t DenseFfn(const ModelSpec& m, const LayerSpec& l) {
  const int64_t f = m.ffn_size_of(l);
  return FfnMatrices(m, m.hidden_size, f) +
         (m.dense_ffn_bias ? FfnBiases(m, m.hidden_size, f) : 0);
}
int64_t SharedExperts(const ModelSpec& m) {
  return m.num_shared_experts * FfnMatrices(m, m.hidden_size, m.shared_ffn_size);
}
// Router over the real and zero-computation experts; latent MoE adds fc1/fc2 latent projections.
int64_t Router(const ModelSpec& m) {
  const int64_t slots = m.num_experts + m.num_zero_experts;
  return m.hidden_size * slots + (m.router_bias ? slots : 0);
}
int64_t LatentProjections(const ModelSpec& m) { return 2 * m.hidden_size * m.moe_latent_size; }
// Final norm; with hyper-connections also the head's stream-mixing weights (hc_head_fn
// [hc, hc h], hc_head_base [hc], hc_head_scale [1]).
int64_t HcHead(const ModelSpec& m) {
  const int64_t hc = m.hc_mult;
  return hc > 0 ? hc * hc * m.hidden_size + hc + 1 : 0;
}
int64_t FinalNorm(const ModelSpec& m) {
  return (m.layernorm_bias ? 2 : 1) * m.hidden_size + HcHead(m);
}

// Mean over query positions i = 1..L of the keys attended, min(i, window) (window 0 = none).
double MeanPrefillKeys(int64_t len, int64_t window) {
  const double l = static_cast<double>(len);
  if (window <= 0 || window >= len) return (l + 1.0) / 2.0;
  const double w = static_cast<double>(window);
  return (w * (w + 1.0) / 2.0 + (l - w) * w) / l;
}

// Softmax attention score + value FLOPs per key, one layer (indexer not included).
double AttentionFlopsPerKey(const ModelSpec& m, const LayerSpec& l, bool decode) {
  const double heads = m.num_heads;
  // DeepSeek-V4: scores and values over the one head_dim-wide KV vector.
  if (m.compressed_kv()) return 4.0 * heads * m.head_dim;
  if (m.attention == AttentionKind::kMla) {
    if (decode) return 2.0 * heads * (2.0 * m.kv_lora_rank + m.qk_rope_head_dim);
    return 2.0 * heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  }
  return 4.0 * heads * m.head_dim_of(l);
}

// Mean over query positions i = 1..L of min(floor(i / r), cap) (cap 0 = none): the compressed
// entries a DeepSeek-V4 query sees (at most cap of them when an indexer picks them).
double MeanPrefillCompressed(int64_t len, int64_t r, int64_t cap) {
  // S(n) = sum_{i=0..n} floor(i / r) = r a (a - 1) / 2 + a (b + 1), n = a r + b, 0 <= b < r.
  auto sum_to = [r](int64_t n) {
    const double a = static_cast<double>(n / r), b = static_cast<double>(n % r);
    return static_cast<double>(r) * a * (a - 1.0) / 2.0 + a * (b + 1.0);
  };
  if (cap <= 0 || len < (cap + 1) * r) return sum_to(len) / static_cast<double>(len);
  const int64_t n = (cap + 1) * r - 1;  // the last position with floor(i / r) <= cap
  return (sum_to(n) + static_cast<double>(len - n) * static_cast<double>(cap)) /
         static_cast<double>(len);
}

// Token-mixer FLOPs of one token beyond the weight matmuls: attention over keys, the indexer
// over the whole context, the recurrent update (see counts.h).
double MixerFlops(const ModelSpec& m, const LayerSpec& l, int64_t context, bool decode) {
  if (HasSoftmax(l)) {
    double f = AttentionFlopsPerKey(m, l, decode) * AttendedKeys(m, l, context, decode);
    if (HasIndexer(l)) {
      // The indexer scores every key (DSA: r = 1; prefill mean (L + 1) / 2) or every
      // compressed entry (DeepSeek-V4).
      const int64_t r = m.compressed_kv() ? std::max(1, l.compress_ratio) : 1;
      const double scored = decode ? static_cast<double>(context / r)
                                   : MeanPrefillCompressed(context, r, 0);
      f += 2.0 * m.index_heads * m.index_head_dim * scored;
    }
    return f;
  }
  switch (l.mixer) {
    case Mixer::kAttention:
    case Mixer::kSparse: return 0.0;  // handled above
    case Mixer::kLinear:
    case Mixer::kMamba: {
      const RecurrentShape r = RecurrentShapeOf(m, l);
      double f = 2.0 * static_cast<double>(r.conv_dim) * r.conv_kernel;  // depthwise conv
      if (decode) return f + 6.0 * r.heads * r.key_dim * r.value_dim;
      const double in_chunk = MeanPrefillKeys(std::min<int64_t>(context, r.chunk), 0);
      return f + 4.0 * r.heads * r.key_dim * r.value_dim +
             2.0 * r.heads * (r.key_dim + r.value_dim) * in_chunk;
    }
    case Mixer::kNone: return 0.0;
  }
  return 0.0;
}

double RoutedExpertsPerToken(const ModelSpec& m) {
  if (!m.is_moe()) return 0.0;
  return static_cast<double>(m.experts_per_token) * m.num_experts /
         static_cast<double>(m.num_experts + m.num_zero_experts);
}

// Weight-matrix multiply-adds of one token in one layer (see counts.h).
double LayerMatmulWeights(const ModelSpec& m, const LayerSpec& l) {
  double w = static_cast<double>(MixerMatrices(m, l));
  w += static_cast<double>(LinearFfn(m, l));
  if (l.ffn == FfnKind::kDense) {
    w += static_cast<double>(FfnMatrices(m, m.hidden_size, m.ffn_size_of(l)));
  } else if (l.ffn == FfnKind::kMoe) {
    w += static_cast<double>(m.hidden_size) * (m.num_experts + m.num_zero_experts) +  // router
         static_cast<double>(SharedExperts(m)) + static_cast<double>(LatentProjections(m)) +
         RoutedExpertsPerToken(m) * static_cast<double>(FfnMatrices(m, ExpertWidth(m),
                                                                    m.expert_ffn_size));
  }
  return w;
}

double MatmulWeightsPerToken(const ModelSpec& m) {
  double w = 0;
  for (const LayerSpec& l : m.layers) w += LayerMatmulWeights(m, l);
  w += static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);  // lm_head matmul
  return w;
}

}  // namespace

double AttendedKeys(const ModelSpec& m, const LayerSpec& l, int64_t context, bool decode) {
  if (context <= 0 || !HasSoftmax(l)) return 0.0;
  const double C = static_cast<double>(context);
  if (m.compressed_kv()) {
    const double window =
        decode ? std::min<double>(C, l.window) : MeanPrefillKeys(context, l.window);
    if (l.compress_ratio == 0) return window;
    const int64_t r = l.compress_ratio;
    const int64_t cap = HasIndexer(l) ? m.index_topk : 0;
    if (!decode) return window + MeanPrefillCompressed(context, r, cap);
    const double all = static_cast<double>(context / r);
    return window + (cap > 0 ? std::min<double>(all, cap) : all);
  }
  if (l.mixer == Mixer::kSparse)
    return decode ? std::min<double>(C, m.index_topk) : MeanPrefillKeys(context, m.index_topk);
  return decode ? (l.window > 0 ? std::min<double>(C, l.window) : C)
                : MeanPrefillKeys(context, l.window);
}

int64_t ExpertWidth(const ModelSpec& m) {
  return m.moe_latent_size > 0 ? m.moe_latent_size : m.hidden_size;
}

RecurrentShape RecurrentShapeOf(const ModelSpec& m, const LayerSpec& l) {
  RecurrentShape r;
  if (l.mixer == Mixer::kLinear) {
    r.heads = m.linear_value_heads;
    r.key_dim = m.linear_key_dim;
    r.value_dim = m.linear_value_dim;
    r.conv_dim = LinearConvDim(m);
    r.conv_kernel = m.linear_conv_kernel;
    r.in_width = 2 * int64_t{m.linear_key_heads} * m.linear_key_dim +
                 2 * int64_t{m.linear_value_heads} * m.linear_value_dim +
                 2 * int64_t{m.linear_value_heads};
    r.out_width = int64_t{m.linear_value_heads} * m.linear_value_dim;
    r.chunk = kDefaultScanChunk;
  } else if (l.mixer == Mixer::kMamba) {
    // v1 has one state row of `mamba_state` per inner channel: heads = inner, value dim 1.
    r.heads = m.mamba_heads;
    r.key_dim = m.mamba_state;
    r.value_dim = m.mamba_head_dim;
    r.conv_dim = MambaConvDim(m);
    r.conv_kernel = m.mamba_conv_kernel;
    r.in_width = MambaInProjWidth(m) +
                 (m.mamba_version == 1 ? m.mamba_dt_rank + 2 * int64_t{m.mamba_state} : 0);
    r.out_width = MambaInner(m);
    r.chunk = m.mamba_chunk > 0 ? m.mamba_chunk : kDefaultScanChunk;
  }
  return r;
}

int64_t AttentionParamsPerLayer(const ModelSpec& m) {
  return MixerMatrices(m, DefaultLayer()) + MixerExtras(m, DefaultLayer());
}

int64_t MixerParams(const ModelSpec& m, const LayerSpec& l) {
  return MixerMatrices(m, l) + MixerExtras(m, l);
}

int64_t ExpertParams(const ModelSpec& m) {
  if (!m.is_moe()) return 0;
  const int64_t w = ExpertWidth(m);
  return FfnMatrices(m, w, m.expert_ffn_size) +
         (m.expert_bias ? FfnBiases(m, w, m.expert_ffn_size) : 0);
}

int64_t NormParamsOfLayer(const ModelSpec& m, const LayerSpec& l) {
  const int64_t sublayers = (l.mixer != Mixer::kNone || l.attn_linear ? 1 : 0) +
                            (l.ffn != FfnKind::kNone || l.ffn_linear ? 1 : 0);
  int64_t n = (m.layernorm_bias ? 2 : 1) * m.norms_per_sublayer * sublayers * m.hidden_size;
  if (HasSoftmax(l)) {
    const int64_t hd = m.head_dim_of(l);
    if (m.qk_norm) n += 2 * hd;
    if (m.qk_norm_full) n += (int64_t{m.num_heads} + m.kv_heads_of(l)) * hd;
    if (m.compressed_kv()) {
      // q_norm, kv_norm; the compressors' norms (attention's, the indexer's).
      n += m.q_lora_rank + m.head_dim + (l.compress_ratio > 0 ? m.head_dim : 0) +
           (HasIndexer(l) ? m.index_head_dim : 0);
    } else if (m.attention == AttentionKind::kMla) {
      n += m.q_lora_rank + m.kv_lora_rank;
    }
  }
  n += m.misc_params_per_layer;
  if (l.ffn == FfnKind::kMoe) n += m.misc_params_per_moe_layer;
  return n;
}

int64_t NormParamsPerLayer(const ModelSpec& m) { return NormParamsOfLayer(m, DefaultLayer()); }

int64_t FfnParamsOfLayer(const ModelSpec& m, const LayerSpec& l) {
  if (l.ffn_linear) return LinearFfn(m, l);
  if (l.ffn == FfnKind::kDense) return DenseFfn(m, l);
  if (l.ffn == FfnKind::kMoe)
    return m.num_experts * ExpertParams(m) + SharedExperts(m) + Router(m) + LatentProjections(m);
  return 0;
}

int64_t LayerParams(const ModelSpec& m, const LayerSpec& l) {
  return MixerParams(m, l) + FfnParamsOfLayer(m, l) + NormParamsOfLayer(m, l);
}

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  c.embedding = m.vocab_size * m.hidden_size;
  c.lm_head = m.tied_embeddings ? 0 : m.vocab_size * m.hidden_size;
  int64_t moe = 0;
  for (const LayerSpec& l : m.layers) {
    c.attention += MixerParams(m, l);
    c.norms += NormParamsOfLayer(m, l);
    c.dense_ffn += LinearFfn(m, l);
    if (l.ffn == FfnKind::kDense) {
      c.dense_ffn += DenseFfn(m, l);
    } else if (l.ffn == FfnKind::kMoe) {
      ++moe;
      c.routed_experts += m.num_experts * ExpertParams(m);
      c.shared_experts += SharedExperts(m);
      c.routers += Router(m) + LatentProjections(m);
    }
  }
  // Hash-routed layers (DeepSeek-V4): a token-id -> experts table [vocab, top-k] in place of the
  // score-correction bias.
  c.routers += int64_t{m.num_hash_layers} *
               (m.vocab_size * m.experts_per_token - (m.router_bias ? m.num_experts : 0));
  c.norms += FinalNorm(m);
  c.total = c.embedding + c.lm_head + c.attention + c.dense_ffn + c.routed_experts +
            c.shared_experts + c.routers + c.norms;
  c.active = c.total - c.routed_experts +
             std::llround(static_cast<double>(moe) * RoutedExpertsPerToken(m) *
                          static_cast<double>(ExpertParams(m)));
  if (m.mtp_layers > 0) {
    // One decoder layer of the model's MoE (else dense) kind with its first layer's mixer.
    LayerSpec block = m.layers.front();
    block.ffn = m.is_moe() ? FfnKind::kMoe : FfnKind::kDense;
    if (block.mixer != Mixer::kSparse) block = LayerSpec{block.ffn, 0};
    block.shared_indexer = false;
    const int64_t h = m.hidden_size;
    // eh_proj (V4: e_proj, h_proj); enorm, hnorm, shared_head.norm (V4: norm and its HC head).
    const int64_t glue = 2 * h * h + 3 * h + HcHead(m);
    // DeepSeek-V3's HF checkpoint stores the MTP module's own embedding and head; DeepSeek-V4's
    // MTP blocks (inference/model.py) and Qwen3.5's use the main model's.
    const int64_t copies =
        m.mtp_shares_embeddings ? 0 : c.embedding + (m.tied_embeddings ? 0 : m.vocab_size * h);
    c.mtp = m.mtp_layers * (LayerParams(m, block) + glue + copies);
  } else if (m.has_draft_model()) {
    // The draft model (model.h DraftLayerOf): fc [3h -> h], its decoder layer - whose GQA q/k/v
    // read [embedding, hidden], 2h wide: h x (q + k + v widths) more than the model's layer -
    // its final norm and its LM head over the draft vocabulary; the embedding table is the
    // model's.
    const ModelSpec d = DraftSpecOf(m);  // the draft's attention shape when its config was read
    const int64_t h = m.hidden_size;
    const int64_t qkv_extra =
        d.attention == AttentionKind::kMla
            ? 0
            : h * (int64_t{d.num_heads} + 2 * int64_t{d.num_kv_heads}) * d.head_dim;
    c.mtp = 3 * h * h + LayerParams(d, DraftLayerOf(m)) + qkv_extra + h + DraftVocabOf(m) * h;
  }
  return c;
}

double KvBytesPerTokenOfLayer(const ModelSpec& m, const LayerSpec& l, DType kv) {
  double elems = 0;
  if (m.compressed_kv() && HasSoftmax(l)) {
    // One head_dim vector per token; compressed layers one per compress_ratio tokens (plus the
    // indexer's key of index_head_dim on ratio-4 layers).
    if (l.compress_ratio == 0) return m.head_dim * BytesPerElement(kv);
    elems = m.head_dim + (HasIndexer(l) ? m.index_head_dim : 0);
    return elems / l.compress_ratio * BytesPerElement(kv);
  }
  if (HasSoftmax(l)) {
    elems = m.attention == AttentionKind::kMla
                ? static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim)
                : 2.0 * m.kv_heads_of(l) * m.head_dim_of(l);
    if (HasIndexer(l)) elems += m.index_head_dim;  // the indexer's key cache
  }
  return elems * BytesPerElement(kv);
}

double KvBytesPerTokenPerLayer(const ModelSpec& m, DType kv) {
  return KvBytesPerTokenOfLayer(m, DefaultLayer(), kv);
}

double KvBytesOfLayerForSequence(const ModelSpec& m, const LayerSpec& l, DType kv,
                                 int64_t context) {
  if (context <= 0) return 0.0;
  const int64_t tokens = l.window > 0 ? std::min<int64_t>(context, l.window) : context;
  if (m.compressed_kv() && l.compress_ratio > 0 && HasSoftmax(l)) {
    const double entries = static_cast<double>(context / l.compress_ratio);
    const double elems = m.head_dim + (HasIndexer(l) ? m.index_head_dim : 0);
    return (static_cast<double>(tokens) * m.head_dim + entries * elems) * BytesPerElement(kv);
  }
  return KvBytesPerTokenOfLayer(m, l, kv) * static_cast<double>(tokens);
}

double KvBytesForSequence(const ModelSpec& m, DType kv, int64_t context) {
  if (context <= 0) return 0.0;
  double bytes = 0;
  for (const LayerSpec& l : m.layers) bytes += KvBytesOfLayerForSequence(m, l, kv, context);
  return bytes;
}

double DraftKvBytesForSequence(const ModelSpec& m, DType kv, int64_t context) {
  if (context <= 0 || !m.can_speculate() || m.layers.empty()) return 0.0;
  if (m.has_draft_model()) {
    const ModelSpec d = DraftSpecOf(m);
    return KvBytesOfLayerForSequence(d, DraftLayerOf(d), kv, context);
  }
  return KvBytesOfLayerForSequence(m, m.layers.back(), kv, context);
}

double KvBytesPerToken(const ModelSpec& m, DType kv) {
  double bytes = 0;
  for (const LayerSpec& l : m.layers) bytes += KvBytesPerTokenOfLayer(m, l, kv);
  return bytes;
}

double StateBytesOfLayer(const ModelSpec& m, const LayerSpec& l) {
  if (!IsRecurrent(l)) return 0.0;
  const RecurrentShape r = RecurrentShapeOf(m, l);
  const double elems = static_cast<double>(r.heads) * r.key_dim * r.value_dim +
                       static_cast<double>(r.conv_dim) * (r.conv_kernel - 1);
  return elems * BytesPerElement(kStateDType);
}

double StateBytesPerSequence(const ModelSpec& m) {
  double bytes = 0;
  for (const LayerSpec& l : m.layers) bytes += StateBytesOfLayer(m, l);
  return bytes;
}

double WeightBytes(const ModelSpec& m, DType weight) {
  const ParamCounts c = CountParams(m);
  // Matrices stored in the checkpoint's weight format.
  double quant = 0;
  for (const LayerSpec& l : m.layers) {
    if (!m.attention_unquantized) quant += static_cast<double>(MixerMatrices(m, l));
    quant += static_cast<double>(LinearFfn(m, l));
    if (l.ffn == FfnKind::kDense) {
      quant += static_cast<double>(FfnMatrices(m, m.hidden_size, m.ffn_size_of(l)));
    } else if (l.ffn == FfnKind::kMoe) {
      quant += static_cast<double>(m.num_experts) *
                   static_cast<double>(FfnMatrices(m, ExpertWidth(m), m.expert_ffn_size)) +
               static_cast<double>(SharedExperts(m)) + static_cast<double>(LatentProjections(m));
    }
  }
  const double rest = static_cast<double>(c.total) - quant;  // kept in bf16
  return quant * BytesPerElement(weight) + rest * BytesPerElement(DType::kBF16);
}

double FlopsPerTokenPrefill(const ModelSpec& m, int64_t prompt_len) {
  if (prompt_len <= 0) return 0.0;
  double mix = 0;
  for (const LayerSpec& l : m.layers) mix += MixerFlops(m, l, prompt_len, /*decode=*/false);
  return 2.0 * MatmulWeightsPerToken(m) + mix;
}

double FlopsPerTokenDecode(const ModelSpec& m, int64_t context) {
  if (context <= 0) return 0.0;
  double mix = 0;
  for (const LayerSpec& l : m.layers) mix += MixerFlops(m, l, context, /*decode=*/true);
  return 2.0 * MatmulWeightsPerToken(m) + mix;
}

double LayerFlopsPerToken(const ModelSpec& m, const LayerSpec& l, int64_t context, bool decode) {
  if (context <= 0) return 0.0;
  return 2.0 * LayerMatmulWeights(m, l) + MixerFlops(m, l, context, decode);
}

}  // namespace l2s
