// ModelSpec: one architecture description for every supported family (dense GQA, MoE, MLA,
// sliding-window). Everything downstream (strategy, simulator) reads only this struct; HF config
// parsing lives in hf_config.h and the built-in numbers in presets.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace l2s {

enum class AttentionKind {
  kGqa,  // multi-head / grouped-query attention (MHA is kv_heads == heads)
  kMla,  // DeepSeek multi-head latent attention
};

enum class FfnKind { kDense, kMoe };

struct LayerSpec {
  FfnKind ffn = FfnKind::kDense;
  int window = 0;  // sliding-window length in tokens; 0 = full attention

  bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
  std::string name;          // preset short name, or the config file path
  std::string architecture;  // HF model_type: "llama", "deepseek_v3", "gpt_moe" (synthetic), ...
  bool synthetic = false;    // true for the paper's GPT-MoE models (not a released checkpoint)

  int num_layers = 0;
  int64_t hidden_size = 0;
  int64_t vocab_size = 0;
  bool tied_embeddings = false;

  // Attention.
  AttentionKind attention = AttentionKind::kGqa;
  int num_heads = 0;
  int num_kv_heads = 0;          // MLA: == num_heads (the decompressed K/V are per head)
  int head_dim = 0;             // q/k/v head dim for GQA; MLA: qk_nope + qk_rope (q/k dim)
  bool attention_bias = false;  // q/k/v/o biases (gpt-oss; llama/qwen3 when attention_bias)
  bool qkv_bias = false;        // q/k/v biases but no o bias (qwen2); unused if attention_bias
  bool attention_sinks = false; // per-head learned sink logits (gpt-oss)
  bool qk_norm = false;         // per-head RMSNorm weights on q and k, head_dim each (qwen3)
  // MLA (attention == kMla). q_lora_rank == 0 means q is projected directly from hidden.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  // Feed-forward. gated = SwiGLU-style (gate, up, down: three matrices) vs GELU MLP (two).
  bool gated_ffn = true;
  int64_t dense_ffn_size = 0;      // intermediate size of dense layers
  int num_experts = 0;             // routed experts per MoE layer (0 = dense model)
  int experts_per_token = 0;       // top-k
  int64_t expert_ffn_size = 0;     // intermediate size of one routed expert
  int num_shared_experts = 0;      // always-active experts in MoE layers
  int64_t shared_ffn_size = 0;     // intermediate size of ONE shared expert
  bool expert_bias = false;        // expert FFN biases (gpt-oss)
  bool dense_ffn_bias = false;     // dense FFN biases (llama mlp_bias)
  bool router_bias = false;        // router bias (gpt-oss; DeepSeek e_score_correction_bias)
  bool layernorm_bias = false;     // LayerNorm with bias (GPT-style) instead of RMSNorm
  int64_t max_context = 0;         // max_position_embeddings (0 = unknown)

  int mtp_layers = 0;  // DeepSeek multi-token-prediction modules (counted apart from the main model)
  DType weight_dtype = DType::kBF16;  // default weight format (from quantization_config)
  // Parts of the model that quantization_config leaves unquantized (gpt-oss keeps attention,
  // router, embeddings and lm_head in bf16); true = these use bf16 whatever weight_dtype is.
  bool attention_unquantized = false;

  std::vector<LayerSpec> layers;  // size num_layers

  bool is_moe() const { return num_experts > 0; }
  int num_moe_layers() const;
  int num_dense_layers() const { return num_layers - num_moe_layers(); }

  bool operator==(const ModelSpec&) const = default;
};

// Upper bounds every ModelSpec must respect. They are far above any released model (the largest
// shared configs: hidden 16384, 126 layers, 384 experts, FFN 53248, vocab 202048) and keep every
// parameter count of counts.h below 2^62, so the int64 arithmetic there cannot overflow:
// layers * experts * 3 * hidden * ffn <= 2^10 * 2^12 * 3 * 2^16 * 2^20 = 3 * 2^58.
struct ModelLimits {
  static constexpr int64_t kMaxLayers = 1 << 10;
  static constexpr int64_t kMaxHidden = 1 << 16;
  static constexpr int64_t kMaxVocab = 1 << 22;
  static constexpr int64_t kMaxHeads = 1 << 10;
  static constexpr int64_t kMaxHeadDim = 1 << 12;
  static constexpr int64_t kMaxFfn = 1 << 20;
  static constexpr int64_t kMaxExperts = 1 << 12;
  static constexpr int64_t kMaxSharedExperts = 1 << 6;
  static constexpr int64_t kMaxLoraRank = 1 << 16;
  static constexpr int64_t kMaxMtpLayers = 16;
  static constexpr int64_t kMaxWindow = (int64_t{1} << 31) - 1;
};

// Checks the structural invariants the rest of l2s relies on: positive sizes within ModelLimits,
// kv heads dividing heads, layers.size() == num_layers, MoE fields consistent with the layer list,
// MLA fields present for kMla. Returns InvalidArgument naming the first offending field.
Status ValidateModelSpec(const ModelSpec& m);

}  // namespace l2s
