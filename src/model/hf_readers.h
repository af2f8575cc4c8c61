// The readers behind ParseHfConfig (hf_config.cc), internal to the model library: one reader per
// config class (it fills the ModelSpec fields its class defines; the common fields are read
// first by ReadCommon), and the helpers they share. Each error names the file, the field and
// what was expected (jsonio::ObjectReader). Files: hf_read_common.cc (shared helpers),
// hf_read_transformers.cc (attention + dense / MoE families), hf_read_hybrid.cc (families with
// per-layer mixers: linear attention, Mamba, heterogeneous blocks, DeepSeek-V4),
// hf_quant.cc (quantization_config and hf_quant_config.json).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "model/json_fields.h"
#include "model/model.h"

namespace l2s::hf {

using nlohmann::json;
using jsonio::ObjectReader;
using L = ModelLimits;

enum class Family { kLlama, kMistral, kMixtral, kQwen2, kQwen3, kQwen3Moe, kDeepseekV3,
                    kGptOss, kLlama4, kDeepseekV32, kGlm4Moe, kGlmMoeDsa, kMinimaxM2, kQwen3Next,
                    kGemma2, kGemma3, kGemma4, kPhi3, kJamba, kNemotronH, kDeciLm, kLongcatFlash,
                    kBailingMoe, kBailingMoeV2, kDeepseekV4, kQwen2Moe, kOlmoe, kOlmo2,
                    kPhiMoe, kGraniteMoe, kErnie, kErnieMoe, kGlm, kGlm4, kSeedOss, kCohere,
                    kCohere2, kDots1, kGraniteMoeHybrid, kQwen35 };

// ---- Shared helpers (hf_read_common.cc)

// Reads a list of layer indices (e.g. mlp_only_layers) into a per-layer flag.
Status ReadLayerIndexList(const ObjectReader& r, std::string_view key, int num_layers,
                          std::vector<bool>* flags);

// layer_types: ["sliding_attention" | "full_attention" | "chunked_attention", ...], one per
// layer. Sliding layers get `window` (which must then be positive).
Status ReadLayerTypes(const ObjectReader& r, const json& types, int64_t window, ModelSpec* m);

// Fields every family has: sizes, attention heads, embeddings.
// `layers_key` names the layer count (LongCat: num_layers, whose blocks hold `per_block` layers
// each); when it is absent and `derived_layers` > 0 (Nemotron-H: the length of
// layers_block_type), that count is used.
Status ReadCommon(const ObjectReader& r, ModelSpec* m,
                  std::string_view layers_key = "num_hidden_layers", int per_block = 1,
                  int64_t derived_layers = 0);

// A sliding window that may be absent or null (= none) but, when given, must be positive.
StatusOr<int64_t> ReadWindowOr(const ObjectReader& r, std::string_view key);

// head_dim, or hidden_size / num_attention_heads when absent (which must divide it and give at
// most ModelLimits::kMaxHeadDim).
Status ReadHeadDim(const ObjectReader& r, ModelSpec* m);

// GQA head geometry: kv heads divide heads; head_dim as ReadHeadDim.
Status ReadGqaHeads(const ObjectReader& r, ModelSpec* m);

// GQA heads and attention_bias (biases on q/k/v and o), as most families read them.
Status ReadGqaAndBias(const ObjectReader& r, ModelSpec* m);

// Qwen2/Qwen3: layer_types if present, else sliding layers are those >= max_window_layers when
// use_sliding_window is true (HF Qwen2Config / Qwen3Config).
Status ReadQwenWindows(const ObjectReader& r, ModelSpec* m);

// Routed-expert count, top-k and expert FFN width under the family's field names.
Status ReadExperts(const ObjectReader& r, std::string_view experts_key,
                   std::string_view topk_key, std::string_view ffn_key, ModelSpec* m);

// intermediate size of the dense layers, required only when the model has dense layers.
Status ReadDenseFfn(const ObjectReader& r, std::string_view key, ModelSpec* m);

// intermediate_size of the dense layers and num_nextn_predict_layers MTP modules (DeepSeek-V3
// and the families that copy its layout).
Status ReadDenseFfnAndMtp(const ObjectReader& r, ModelSpec* m);

void SetAllMoe(ModelSpec* m);

// A per-layer list of strings (layer_types, mlp_layer_types, layers_block_type, ...): one entry
// per layer, each one of `allowed`; returns the index into `allowed` per layer.
Status ReadLayerStrings(const ObjectReader& r, std::string_view key, int num_layers,
                        std::initializer_list<std::string_view> allowed, std::vector<int>* out);

// DeepSeek Sparse Attention (deepseek_v32, glm_moe_dsa): every layer sparse, indexer fields with
// the defaults of the family's HF config class. `indexer_types` (GLM-5.x, optional): per layer
// "full" (own indexer) or "shared" (reuses the previous indexer's top-k).
Status ReadSparseAttention(const ObjectReader& r, int64_t heads_default, ModelSpec* m);

// mlp_layer_types ("dense" / "sparse" per layer) when present, else the DeepSeek rule
// (first_k_dense_replace dense layers, then MoE every moe_layer_freq).
Status ReadMlpLayerTypes(const ObjectReader& r, ModelSpec* m);

// DeepSeek-style MoE layout of GLM-4.x and Ling: `shared_key` shared experts of the routed
// experts' width, the first first_k_dense_replace layers dense (intermediate_size), the rest MoE,
// num_nextn_predict_layers MTP modules.
Status ReadFirstDenseLayout(const ObjectReader& r, std::string_view shared_key, ModelSpec* m);

// MLA attention fields (DeepSeek-V3 and the families that reuse its attention).
Status ReadMla(const ObjectReader& r, ModelSpec* m);

// The Qwen MoE layout (Qwen2-MoE, Qwen3-MoE, Qwen3-Next, Qwen3-VL-MoE): num_experts of
// moe_intermediate_size, top num_experts_per_tok; a layer is MoE unless it is in mlp_only_layers
// or (layer+1) % decoder_sparse_step != 0, dense layers use intermediate_size. With
// `gated_shared`, shared_expert_intermediate_size > 0 adds one shared expert of that width behind
// a sigmoid gate (shared_expert_gate, [1, hidden]).
Status ReadQwenSparseLayout(const ObjectReader& r, bool gated_shared, ModelSpec* m);

// ---- Transformer families (hf_read_transformers.cc): the config class each reads is named at
// its definition.
Status ReadLlamaLike(const ObjectReader& r, Family f, ModelSpec* m);
Status ReadMixtral(const ObjectReader& r, ModelSpec* m);
Status ReadQwen3Moe(const ObjectReader& r, ModelSpec* m);
Status ReadDeepseekV3(const ObjectReader& r, ModelSpec* m);
Status ReadGptOss(const ObjectReader& r, ModelSpec* m);
Status ReadLlama4(const ObjectReader& r, ModelSpec* m);
Status ReadDeepseekV32(const ObjectReader& r, ModelSpec* m);
Status ReadGlmMoeDsa(const ObjectReader& r, ModelSpec* m);
Status ReadGlm4Moe(const ObjectReader& r, ModelSpec* m);
Status ReadMinimaxM2(const ObjectReader& r, ModelSpec* m);
Status ReadGemma(const ObjectReader& r, Family f, const ObjectReader& top, ModelSpec* m);
Status ReadPhi3(const ObjectReader& r, ModelSpec* m);
Status ReadBailingMoe(const ObjectReader& r, bool v2, ModelSpec* m);
Status ReadQwen2Moe(const ObjectReader& r, ModelSpec* m);
Status ReadOlmoe(const ObjectReader& r, ModelSpec* m);
Status ReadOlmo2(const ObjectReader& r, ModelSpec* m);
Status ReadPhiMoe(const ObjectReader& r, ModelSpec* m);
Status ReadGraniteMoe(const ObjectReader& r, ModelSpec* m);
Status ReadErnie(const ObjectReader& r, bool moe, ModelSpec* m);
Status ReadGlmDense(const ObjectReader& r, bool glm4, ModelSpec* m);
Status ReadSeedOss(const ObjectReader& r, ModelSpec* m);
Status ReadCohere(const ObjectReader& r, bool v2, ModelSpec* m);
Status ReadDots1(const ObjectReader& r, ModelSpec* m);

// ---- Families with per-layer mixers (hf_read_hybrid.cc)
Status ReadQwen3Next(const ObjectReader& r, bool v35, ModelSpec* m);
Status ReadJamba(const ObjectReader& r, ModelSpec* m);
Status ReadNemotronH(const ObjectReader& r, ModelSpec* m);
Status ReadDeciLm(const ObjectReader& r, ModelSpec* m);
Status ReadLongcatFlash(const ObjectReader& r, ModelSpec* m);
Status ReadGraniteMoeHybrid(const ObjectReader& r, ModelSpec* m);
Status ReadDeepseekV4(const ObjectReader& r, ModelSpec* m);

// ---- Quantization (hf_quant.cc): quantization_config of the top-level config (fp8, fp4,
// per-block fp8, modelopt, compressed-tensors; other methods are refused with the way out).
Status ReadQuantization(const ObjectReader& top, ModelSpec* m);

}  // namespace l2s::hf
