// ModelSpec: one architecture description for every supported family (dense GQA, MoE, MLA,
// sliding-window, sparse top-k attention, linear attention, state-space layers, per-layer shapes). Everything downstream (strategy, simulator) reads only this struct; HF config
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

// Feed-forward block of one layer. A MoE layer's flavour (shared experts, latent MoE,
// zero-computation experts) is a property of the model (the ModelSpec MoE fields below).
enum class FfnKind : uint8_t { kDense, kMoe, kNone };

// Token mixer of one layer (the layer's "attention kind").
enum class Mixer : uint8_t {
  kAttention,  // softmax attention over the whole context, or the last `window` tokens
  kSparse,     // softmax attention over the index_topk tokens a lightning indexer selects (DSA)
  kLinear,     // gated DeltaNet linear attention: fixed-size recurrent state per sequence
  kMamba,      // Mamba (v1) / Mamba2 selective state-space layer: fixed-size state per sequence
  kNone,       // no token mixer (Nemotron-H MLP blocks, DeciLM no-op attention)
};
const char* MixerName(Mixer k);    // "attention", "sparse", "linear", "mamba", "none"
const char* FfnKindName(FfnKind k);  // "dense", "moe", "none"

struct LayerSpec {
  FfnKind ffn = FfnKind::kDense;
  int window = 0;  // sliding-window length in tokens; 0 = full attention (kAttention only)
  Mixer mixer = Mixer::kAttention;
  // Per-layer shapes of models whose layers differ (0 = the model-wide value):
  int kv_heads = 0;      // attention KV heads (DeciLM n_heads_in_group, Gemma 4 global layers)
  int head_dim = 0;      // attention head dim (Gemma 4 global layers)
  int64_t ffn_size = 0;  // dense FFN width (DeciLM ffn_mult)
  bool k_eq_v = false;   // V comes from the K projection: no v_proj weights (Gemma 4 global)
  bool shared_indexer = false;  // kSparse: reuses an earlier layer's top-k (no indexer of its own)
  // DeciLM replace_with_linear: the sublayer is one hidden x hidden matrix (with its norm); the
  // mixer / FFN kind is then kNone.
  bool attn_linear = false;
  bool ffn_linear = false;
  // DeepSeek-V4 (ModelSpec::compressed_kv()): this layer's KV is also pooled into one entry per
  // `compress_ratio` tokens, which it attends beside its last `window` tokens (0 = window only).
  // Ratio-4 layers are kSparse: an indexer picks index_topk of the compressed entries; other
  // ratios attend every compressed entry.
  int compress_ratio = 0;

  bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
  std::string name;          // preset short name, or the config file path
  std::string architecture;  // HF model_type: "llama", "deepseek_v3", "gpt_moe" (synthetic), ...
  std::string hf_class;      // config.json architectures[0] ("LlamaForCausalLM"); "" = unknown
  bool synthetic = false;    // true for the paper's GPT-MoE models (not a released checkpoint)
  // The checkpoint launch commands load, as the user named it (--model-id: a HuggingFace repo id
  // or a folder); "" = launch::ResolveModelId's rules (preset, repo id, config name field, ...).
  std::string launch_id;

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
  bool qk_norm_full = false;    // q/k RMSNorm over all heads (heads*hd and kv*hd; MiniMax-M2)
  bool gated_attention = false; // q_proj also emits a per-element output gate (Qwen3-Next)
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
  bool vision_tower = false;       // a vision / audio tower (not modelled): a vision_config or
                                   // audio_config, or a *ForConditionalGeneration class

  // Sparse attention (kSparse layers; DeepSeek-V3.2 / GLM-5 DSA): each query attends the
  // index_topk keys picked by an indexer of index_heads heads of index_head_dim over all keys.
  int index_topk = 0;
  int index_heads = 0;
  int index_head_dim = 0;
  // Gated DeltaNet (kLinear layers; Qwen3-Next): q/k heads of linear_key_dim, v heads of
  // linear_value_dim, a causal depthwise conv of linear_conv_kernel taps over q, k, v.
  int linear_key_heads = 0;
  int linear_value_heads = 0;
  int linear_key_dim = 0;
  int linear_value_dim = 0;
  int linear_conv_kernel = 0;
  // Mamba (kMamba layers). mamba_version 2 (Nemotron-H): mamba_heads heads of mamba_head_dim,
  // B/C shared by mamba_groups groups, state size mamba_state. Version 1 (Jamba): one "head" per
  // inner channel (mamba_heads = inner = expand * hidden, mamba_head_dim = 1), dt_rank projection.
  int mamba_version = 0;
  int mamba_heads = 0;
  int mamba_head_dim = 0;
  int mamba_state = 0;
  int mamba_groups = 1;
  int mamba_conv_kernel = 0;
  int mamba_dt_rank = 0;         // v1 only
  int mamba_chunk = 0;           // chunk of the prefill scan (0 = kDefaultScanChunk)
  bool mamba_conv_bias = false;
  bool mamba_proj_bias = false;  // in_proj / out_proj biases
  // Norm layout: RMSNorms (or LayerNorms) of `hidden` per sublayer (mixer, FFN) that is present:
  // 1 = pre-norm only (llama), 2 = pre + post (Gemma 2/3/4 "sandwich").
  int norms_per_sublayer = 1;
  // MoE flavours.
  int num_zero_experts = 0;     // identity ("zero-computation") experts routed like the others
                                // (LongCat-Flash); a token's top-k real experts average
                                // experts_per_token * E / (E + Z) under uniform routing
  int64_t moe_latent_size = 0;  // latent MoE: experts work in this width (Nemotron 3), with
                                // fc1/fc2 latent projections around dispatch and combine
  // Small per-layer vectors the formulas above do not cover (router scales, per-layer scalars,
  // extra norms of a parallel MoE branch; see the family's reader), counted with the norms.
  int64_t misc_params_per_layer = 0;
  int64_t misc_params_per_moe_layer = 0;

  // DeepSeek-V4 attention (o_groups > 0): one shared KV vector of head_dim per token, used as both
  // key and value by every head (mapped onto the MLA fields: kv_lora_rank = head_dim -
  // qk_rope_head_dim, v_head_dim = head_dim, no kv_b projection), q from a q_lora_rank latent,
  // output projected per group of heads to o_lora_rank (wo_a) then to hidden (wo_b); per-layer
  // KV compression (LayerSpec::compress_ratio). hc_mult residual streams (hyper-connections);
  // the first num_hash_layers MoE layers route by token id (a vocab x top-k table, no bias).
  int o_lora_rank = 0;
  int o_groups = 0;
  int hc_mult = 0;
  int num_hash_layers = 0;
  bool compressed_kv() const { return o_groups > 0; }

  int mtp_layers = 0;  // DeepSeek multi-token-prediction modules (counted apart from the main model)
  bool mtp_shares_embeddings = false;  // the MTP modules use the main model's embedding and head
                                      // (DeepSeek-V4, Qwen3.5); DeepSeek-V3 stores its own copies
  // An external speculative-decoding draft model for a model without MTP layers (--draft-model:
  // the id or folder the launch commands load; "" = none). l2s prices it as an EAGLE-3 draft
  // (src/strategy/layout.cc DraftModelPass): the fusion of three hidden states of the model, one
  // dense decoder layer of the model's attention shape, and an LM head over a draft vocabulary.
  std::string draft_model;
  // The draft's own shape when its config.json was found (AttachDraftModel in model_source.h):
  // its attention heads, KV heads, head dim, FFN width and draft vocabulary; 0 = the rule of
  // DraftLayerOf / kDraftVocab. `draft_config` is the file read ("" = none).
  int draft_heads = 0, draft_kv_heads = 0, draft_head_dim = 0;
  int64_t draft_ffn = 0, draft_vocab = 0;
  std::string draft_config;
  bool has_draft_model() const { return mtp_layers <= 0 && !draft_model.empty(); }
  // Whether speculative decoding (strategy mtp > 0) has something to draft with.
  bool can_speculate() const { return mtp_layers > 0 || !draft_model.empty(); }
  DType weight_dtype = DType::kBF16;  // default weight format (from quantization_config)
  // The checkpoint's FP8 weights carry block scales (quantization_config.weight_block_size, e.g.
  // DeepSeek's 128x128): engines run them on the block-scaled FP8 GEMMs, not per-tensor FP8.
  bool weight_block_scaled = false;
  // Parts of the model that quantization_config leaves unquantized (gpt-oss keeps attention,
  // router, embeddings and lm_head in bf16); true = these use bf16 whatever weight_dtype is.
  bool attention_unquantized = false;

  std::vector<LayerSpec> layers;  // size num_layers

  bool is_moe() const { return num_experts > 0; }
  // Layers that keep a recurrent state per sequence (Mamba, Gated DeltaNet) beside or instead of
  // a KV cache.
  bool has_recurrent_state() const { return mamba_version > 0 || linear_value_heads > 0; }
  int num_moe_layers() const;
  int num_dense_layers() const;  // layers whose FFN is dense
  int num_mixer_layers(Mixer k) const;
  // Per-layer shapes with the model-wide defaults resolved.
  int kv_heads_of(const LayerSpec& l) const { return l.kv_heads > 0 ? l.kv_heads : num_kv_heads; }
  int head_dim_of(const LayerSpec& l) const { return l.head_dim > 0 ? l.head_dim : head_dim; }
  int64_t ffn_size_of(const LayerSpec& l) const {
    return l.ffn_size > 0 ? l.ffn_size : dense_ffn_size;
  }

  bool operator==(const ModelSpec&) const = default;
};

// The draft model of ModelSpec::draft_model, priced as an EAGLE-3 draft: its LM head covers a
// draft vocabulary of kDraftVocab tokens (the EAGLE-3 speculators' 32K draft vocabulary, mapped
// onto the target's; a smaller target vocabulary is used whole), and its one decoder layer is
// DraftLayerOf(m): full softmax attention of the model's shape (q/k/v heads, head dim; an MLA
// model keeps its MLA), its GQA q/k/v reading [embedding, hidden] (2h wide), and a dense FFN of
// the model's dense width - for an MoE model without one, the width a token is active in (top-k
// routed experts plus the shared ones).
inline constexpr int64_t kDraftVocab = 32000;
LayerSpec DraftLayerOf(const ModelSpec& m);
// The model as its draft layer sees it: `m` with the draft's attention shape (a draft config read:
// GQA with its heads, KV heads and head dim) for building that layer; `m` itself otherwise.
ModelSpec DraftSpecOf(const ModelSpec& m);
// The draft's LM-head vocabulary: its config's, else min(vocab, kDraftVocab).
int64_t DraftVocabOf(const ModelSpec& m);

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
  static constexpr int64_t kMaxState = 1 << 12;  // Mamba state size / linear-attention head dim
  // Distinct layer shapes (LayerSpec values) one model may have: the simulator keeps one
  // program section per kind (strategy/program.h Program::kMaxKinds).
  static constexpr int kMaxLayerKinds = 24;
};

// Prefill chunk of the linear-attention / Mamba chunked scan when the config gives none (the
// chunk size of the flash-linear-attention gated-DeltaNet kernels).
inline constexpr int kDefaultScanChunk = 64;

// Checks the structural invariants the rest of l2s relies on: positive sizes within ModelLimits,
// kv heads dividing heads, layers.size() == num_layers, MoE fields consistent with the layer list,
// MLA fields present for kMla, the sparse / linear / Mamba fields present for layers of those
// kinds, at most kMaxLayerKinds distinct layer shapes. Returns InvalidArgument naming the first
// offending field.
Status ValidateModelSpec(const ModelSpec& m);

// Attaches the draft model `id` (a HuggingFace repo id or a checkpoint folder, as the launch
// commands load it) to `m` (ModelSpec::draft_model). InvalidArgument, in the words of
// --draft-model, when `m` has MTP layers of its own (engines draft with those), has no attention
// heads for the draft layer to copy, or `id` is empty or holds characters a launch command's
// shell or JSON would read otherwise.
Status AttachDraftModel(const std::string& id, ModelSpec* m);

}  // namespace l2s
