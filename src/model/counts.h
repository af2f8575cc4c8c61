// Derived figures of a ModelSpec: parameter counts, KV-cache bytes, FLOPs per token.
// Every function expects a ModelSpec that passes ValidateModelSpec (model.h); within those limits
// no count can overflow int64.
//
// Conventions (stated so they can be checked):
// - total_params counts every weight of the main model: embeddings, lm_head (once if tied),
//   attention, FFN/experts, routers, norms and biases. The MTP module is reported separately
//   (mtp_params) and is not in total_params.
// - active_params = parameters touched by one token: everything except the routed experts that
//   are not selected (only experts_per_token of num_experts count), embeddings INCLUDED (the whole
//   input table and the lm_head). Publishers differ here: Qwen, Mistral, DeepSeek and Meta quote
//   figures close to this; OpenAI's gpt-oss card counts the unembedding but not the embedding
//   table (compare `active - embedding` with it). docs/MODELS.md has the table.
// - Norms: RMSNorm weights (input + post-attention per layer, the final norm; qwen3 q/k norms;
//   MLA q_a/kv_a latent norms); LayerNorm adds a bias of the same size when layernorm_bias.
// - DeepSeek MTP module (mtp_params, per module): one decoder layer of the MoE kind, eh_proj
//   (2*hidden x hidden), enorm/hnorm/shared_head.norm, plus the copies of the embedding table and
//   output head stored with it in the HF checkpoint (shared with the main model at run time).
//   DeepSeek-V3: 13.5B, the "14B MTP module" of its model card (685B = 671B + 14B).
#pragma once

#include <cstdint>

#include "common/dtype.h"
#include "model/model.h"

namespace l2s {

struct ParamCounts {
  int64_t total = 0;
  int64_t active = 0;
  int64_t embedding = 0;     // input embedding table
  int64_t lm_head = 0;       // 0 when tied
  int64_t attention = 0;     // all layers
  int64_t dense_ffn = 0;     // dense-layer FFNs
  int64_t routed_experts = 0;
  int64_t shared_experts = 0;
  int64_t routers = 0;
  int64_t norms = 0;
  int64_t mtp = 0;           // not in total
};

ParamCounts CountParams(const ModelSpec& m);

// Attention weights of ONE layer (q/k/v/o or the MLA projections, with biases and sinks; the
// qk / latent norms are counted under norms).
int64_t AttentionParamsPerLayer(const ModelSpec& m);
// Weights of ONE routed expert (matrices and, if expert_bias, biases).
int64_t ExpertParams(const ModelSpec& m);
// Norm weights of ONE decoder layer.
int64_t NormParamsPerLayer(const ModelSpec& m);

// KV-cache bytes one token occupies in ONE layer (its cache is only that layer's), at kv dtype.
// GQA: 2 * kv_heads * head_dim elements. MLA: kv_lora_rank + qk_rope_head_dim (latent cache).
double KvBytesPerTokenPerLayer(const ModelSpec& m, DType kv);
// Whole model: sum over layers, for a sequence of `context` tokens (sliding-window layers hold
// at most `window` tokens). Per-token figure = KvBytes(m, kv, context) / context. 0 if context<=0.
double KvBytesForSequence(const ModelSpec& m, DType kv, int64_t context);
// Per token for an unbounded context (window layers count as full): what describe prints.
double KvBytesPerToken(const ModelSpec& m, DType kv);

// Bytes of the main model's weights when its quantizable matrices are stored as `weight`:
// attention projections (unless attention_unquantized), dense FFN, routed and shared experts.
// Embedding, lm_head, routers, norms, biases and sinks stay bf16, as in every released fp8/fp4
// checkpoint of the shared configs. Block-scale overhead of fp8 (one fp32 scale per 128x128
// block, 0.02%) is not counted; MXFP4's per-32 scale is (BytesPerElement). For bf16 this is
// exactly 2 * total_params.
double WeightBytes(const ModelSpec& m, DType weight);

// Matmul FLOPs (2 per multiply-add) per token: weight matrices touched (active params minus the
// embedding lookup, norms and biases; the lm_head matmul counts even when tied) plus attention
// score/value FLOPs. Prefill of a prompt of length L averages the causal attention over positions
// (query i attends min(i, window) keys; (L+1)/2 on average without a window); decode at context C
// attends C keys (min(C, window) on window layers). Attention FLOPs per key per layer:
// GQA 4 * heads * head_dim; MLA prefill 2 * heads * (qk_nope + qk_rope + v_head_dim) (K/V
// decompressed); MLA decode 2 * heads * (2 * kv_lora_rank + qk_rope) (weights absorbed, attention
// over the latent cache; the absorbed projections cost the same as kv_b_proj, so the weight term
// is unchanged).
double FlopsPerTokenPrefill(const ModelSpec& m, int64_t prompt_len);
double FlopsPerTokenDecode(const ModelSpec& m, int64_t context);

}  // namespace l2s
