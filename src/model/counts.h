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
// - Layer kinds (model.h Mixer / FfnKind): every figure is a sum over layers of that layer's
//   own shape. Recurrent layers (linear attention, Mamba) hold no KV cache but a fixed state per
//   sequence (StateBytesPerSequence); sparse layers cache the latent KV of every token plus the
//   indexer's key, but attend only index_topk keys.
// - Zero-computation experts: a token's top-k over E real + Z identity experts uses, under
//   uniform routing, k E / (E + Z) real experts on average: active params and FLOPs use that.
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
  int64_t mtp = 0;           // MTP modules, or the draft model (ModelSpec::draft_model); not in total
};

ParamCounts CountParams(const ModelSpec& m);

// Recurrent state is kept in bf16 whatever the KV-cache dtype (vLLM's and SGLang's default
// mamba / linear-attention state dtype is the model's dtype).
inline constexpr DType kStateDType = DType::kBF16;

// Attention weights of ONE full-attention layer of the model-wide shape (q/k/v/o or the MLA
// projections, with biases and sinks; the qk / latent norms are counted under norms).
int64_t AttentionParamsPerLayer(const ModelSpec& m);
// Token-mixer weights of one layer of shape `l` (attention + indexer, DeltaNet or Mamba
// projections, convolutions and per-head vectors; its norms are in NormParamsOfLayer).
int64_t MixerParams(const ModelSpec& m, const LayerSpec& l);
// FFN weights of one layer (dense MLP, or routed + shared experts, router, latent projections).
int64_t FfnParamsOfLayer(const ModelSpec& m, const LayerSpec& l);
// Everything of one layer: MixerParams + FfnParamsOfLayer + NormParamsOfLayer.
int64_t LayerParams(const ModelSpec& m, const LayerSpec& l);
// Weights of ONE routed expert (matrices and, if expert_bias, biases).
int64_t ExpertParams(const ModelSpec& m);
// Width routed experts work in: moe_latent_size for latent MoE, else hidden_size.
int64_t ExpertWidth(const ModelSpec& m);
// Norm weights of ONE full-attention dense decoder layer / of a layer of shape `l`: hidden-sized
// norms per present sublayer, q/k norms and MLA latent norms on softmax layers, misc vectors.
int64_t NormParamsPerLayer(const ModelSpec& m);
int64_t NormParamsOfLayer(const ModelSpec& m, const LayerSpec& l);

// Shape of a recurrent (kLinear / kMamba) layer's state and projections; zeros otherwise.
//   state elements per sequence = heads * key_dim * value_dim + conv_dim * (conv_kernel - 1).
// DeltaNet: heads = value heads, key_dim / value_dim their head dims, conv over q, k, v.
// Mamba2: heads, key_dim = state size, value_dim = head dim, conv over x, B, C.
// Mamba v1: heads = inner channels, key_dim = state size, value_dim = 1, conv over x.
struct RecurrentShape {
  int64_t heads = 0, key_dim = 0, value_dim = 0, conv_dim = 0, conv_kernel = 0;
  int64_t in_width = 0;   // output features of the input projection(s) (one matmul from hidden)
  int64_t out_width = 0;  // input features of the output projection (to hidden)
  int64_t chunk = 0;      // prefill scan chunk
};
RecurrentShape RecurrentShapeOf(const ModelSpec& m, const LayerSpec& l);
// Fixed state bytes (kStateDType) one sequence keeps in layer `l` (0 for non-recurrent layers),
// and over the whole model.
double StateBytesOfLayer(const ModelSpec& m, const LayerSpec& l);
double StateBytesPerSequence(const ModelSpec& m);

// KV-cache bytes one token occupies in ONE layer (its cache is only that layer's), at kv dtype.
// GQA: 2 * kv_heads * head_dim elements. MLA: kv_lora_rank + qk_rope_head_dim (latent cache);
// sparse (DSA) layers add the indexer key (index_head_dim); recurrent and no-mixer layers 0.
// DeepSeek-V4: head_dim (K = V); a compressed layer (ratio r) (head_dim [+ index_head_dim]) / r,
// its bounded window of uncompressed tokens left to KvBytesForSequence.
// The first form is for a full-attention layer of the model-wide shape.
double KvBytesPerTokenPerLayer(const ModelSpec& m, DType kv);
double KvBytesPerTokenOfLayer(const ModelSpec& m, const LayerSpec& l, DType kv);
// Whole model: sum over layers, for a sequence of `context` tokens (sliding-window layers hold
// at most `window` tokens). Per-token figure = KvBytes(m, kv, context) / context. 0 if context<=0.
double KvBytesForSequence(const ModelSpec& m, DType kv, int64_t context);
// One layer's share of KvBytesForSequence. DeepSeek-V4 compressed layers (compress_ratio r > 0)
// hold their last min(C, window) tokens (head_dim each) plus floor(C / r) pooled entries of
// head_dim (+ index_head_dim for the ratio-4 indexer's keys).
double KvBytesOfLayerForSequence(const ModelSpec& m, const LayerSpec& l, DType kv,
                                 int64_t context);
// The speculative draft's KV cache for a sequence: one layer's, the MTP module's (the model's
// last layer kind, as the simulator's draft pass builds it) or the draft model's (DraftLayerOf
// of DraftSpecOf); the engines keep one draft layer's cache whatever the depth. 0 for a model
// that cannot speculate.
double DraftKvBytesForSequence(const ModelSpec& m, DType kv, int64_t context);
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
// DeepSeek-V4 layers attend min(C, window) keys plus, at ratio r, floor(C / r) compressed
// entries (ratio 4: at most index_topk of them, picked by an indexer that scores all floor(C / 4)
// at 2 * index_heads * index_head_dim FLOPs each; prefill: the mean over positions i of each),
// 4 * heads * head_dim FLOPs per key.
// Sparse (DSA) layers attend min(C, index_topk) keys (prefill: min(i, index_topk)) and their
// indexer scores every key: 2 * index_heads * index_head_dim FLOPs per key (prefill: (L+1)/2
// keys on average). Recurrent layers, per token: decode 6 * heads * key_dim * value_dim (decay,
// rank-1 state update and read-out, one pass over the state each); prefill (chunked scan with
// chunk c) 4 * heads * key_dim * value_dim (state read-out and update amortised over the chunk)
// + 2 * heads * (key_dim + value_dim) * (min(c, L) + 1) / 2 (causal attention inside the chunk);
// both plus 2 * conv_dim * conv_kernel for the depthwise convolution.
double FlopsPerTokenPrefill(const ModelSpec& m, int64_t prompt_len);
// Keys one query attends in softmax layer `l`: decode at context C, prefill the mean over the
// positions of a prompt of length C (the figures above); 0 on recurrent and no-mixer layers.
double AttendedKeys(const ModelSpec& m, const LayerSpec& l, int64_t context, bool decode);
double FlopsPerTokenDecode(const ModelSpec& m, int64_t context);
// The same for one layer of shape `l` (weights and mixer), at context / prompt length `context`.
double LayerFlopsPerToken(const ModelSpec& m, const LayerSpec& l, int64_t context, bool decode);

}  // namespace l2s
