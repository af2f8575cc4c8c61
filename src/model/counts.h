// Derived figures of a ModelSpec: parameter counts, KV-cache bytes, FLOPs per token.
//
// Conventions (stated so they can be checked):
// - total_params counts every weight of the main model: embeddings, lm_head (once if tied),
//   attention, FFN/experts, routers, norms and biases. The MTP module is reported separately
//   (mtp_params) and is not in total_params.
// - active_params = parameters touched by one token: everything except the routed experts that
//   are not selected (only experts_per_token of num_experts count), embeddings INCLUDED.
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

// Attention weights of ONE layer (q/k/v/o or the MLA projections, with biases and sinks).
int64_t AttentionParamsPerLayer(const ModelSpec& m);

// KV-cache bytes one token occupies in ONE layer (its cache is only that layer's), at kv dtype.
// GQA: 2 * kv_heads * head_dim elements. MLA: kv_lora_rank + qk_rope_head_dim (latent cache).
double KvBytesPerTokenPerLayer(const ModelSpec& m, DType kv);
// Whole model: sum over layers, for a sequence of `context` tokens (sliding-window layers hold
// at most `window` tokens). Per-token figure = KvBytes(m, kv, context) / context.
double KvBytesForSequence(const ModelSpec& m, DType kv, int64_t context);
// Per token for an unbounded context (window layers count as full): what describe prints.
double KvBytesPerToken(const ModelSpec& m, DType kv);

double WeightBytes(const ModelSpec& m, DType weight);  // total_params at that dtype

// Matmul FLOPs (2 per multiply-add) per token: weights touched (active params minus embedding
// lookup) plus attention score/value FLOPs. Prefill of a prompt of length L averages the causal
// attention over positions (L/2 keys per query); decode at context C attends C keys.
double FlopsPerTokenPrefill(const ModelSpec& m, int64_t prompt_len);
double FlopsPerTokenDecode(const ModelSpec& m, int64_t context);

}  // namespace l2s
