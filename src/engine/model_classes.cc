#include "engine/model_classes.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

#include "common/text.h"

namespace l2s::engine {
namespace {

// github.com/ROCm/ATOM atom/model_engine/model_runner.py @ 00afbe32bba08e0377298a6833a3ac35c4f0e4d9,
// the keys of support_model_arch_dict (scripts/engine_model_classes.py atom).
constexpr std::array<std::string_view, 25> kAtomClasses = {
    "DeepseekV32ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV41ForCausalLM",
    "DeepseekV4ForCausalLM",
    "Glm4MoeForCausalLM",
    "Glm5NextForConditionalGeneration",
    "GlmMoeDsaForCausalLM",
    "GptOssForCausalLM",
    "KimiK25ForConditionalGeneration",
    "KimiK3ForConditionalGeneration",
    "LlamaForCausalLM",
    "MiMoV2FlashForCausalLM",
    "MiMoV2ForCausalLM",
    "MiniMaxM2ForCausalLM",
    "MiniMaxM3SparseForCausalLM",
    "MiniMaxM3SparseForConditionalGeneration",
    "Mistral3ForConditionalGeneration",
    "MistralForCausalLM",
    "MixtralForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
};

// github.com/NVIDIA/TensorRT-LLM, its documentation page models/supported-models.md (docs source)
// @ 00b6d5a25c30b4382d24fbdf52956d601b3ffd24: the Architecture column of "Supported Models"
// (PyTorch backend; [^5] rows via AutoDeploy) and of "Multimodal Feature Support Matrix"
// (scripts/engine_model_classes.py trtllm). Compared case-insensitively: the page spells
// DeepSeek-V2's class DeepSeekV2ForCausalLM.
constexpr std::array<std::string_view, 69> kTrtllmClasses = {
    "AfmoeForCausalLM",
    "BertForSequenceClassification",
    "Cohere2ForCausalLM",
    "Cosmos3ForConditionalGeneration",
    "DeciLMForCausalLM",
    "DeepSeekV2ForCausalLM",
    "DeepseekV32ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV4ForCausalLM",
    "Exaone4ForCausalLM",
    "Exaone4_5_ForConditionalGeneration",
    "ExaoneForCausalLM",
    "ExaoneMoEForCausalLM",
    "Gemma3ForCausalLM",
    "Gemma3ForConditionalGeneration",
    "Gemma3nForConditionalGeneration",
    "Gemma4AssistantForCausalLM",
    "Gemma4ForConditionalGeneration",
    "Gemma4UnifiedForConditionalGeneration",
    "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "GlmMoeDsaForCausalLM",
    "GptOssForCausalLM",
    "GraniteForCausalLM",
    "GraniteMoeHybridForCausalLM",
    "HCXVisionForCausalLM",
    "HunYuanDenseForCausalLM",
    "HunYuanMoEForCausalLM",
    "InklingForConditionalGeneration",
    "InternLM3ForCausalLM",
    "KimiK25ForConditionalGeneration",
    "LagunaForCausalLM",
    "Llama4ForConditionalGeneration",
    "LlamaForCausalLM",
    "LlavaLlamaModel",
    "LlavaNextForConditionalGeneration",
    "MiniCPMV4_6ForConditionalGeneration",
    "MiniMaxM2ForCausalLM",
    "MiniMaxM3SparseForConditionalGeneration",
    "Mistral3ForConditionalGeneration",
    "MistralForCausalLM",
    "MixtralForCausalLM",
    "MllamaForConditionalGeneration",
    "NemotronForCausalLM",
    "NemotronHForCausalLM",
    "NemotronH_Nano_VL_V2",
    "NemotronNASForCausalLM",
    "Olmo3ForCausalLM",
    "OpenELMForCausalLM",
    "Phi3ForCausalLM",
    "Phi4MMForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen2ForProcessRewardModel",
    "Qwen2ForRewardModel",
    "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration",
    "Qwen3ForCausalLM",
    "Qwen3ForTextEmbedding",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
    "SeedOssForCausalLM",
    "SkyworkR1V2ForConditionalGeneration",
    "SmolLM3ForCausalLM",
    "Step3p7ForConditionalGeneration",
};

struct ClassList {
  EngineId workers;
  bool authoritative;
  std::string_view where;
  std::span<const std::string_view> classes;
};

constexpr std::array<ClassList, 2> kLists = {{
    {EngineId::kAtom, true, "ATOM's model runner (support_model_arch_dict, ROCm/ATOM @ 00afbe3)",
     kAtomClasses},
    {EngineId::kTrtllm, false,
     "TensorRT-LLM's supported-models page (PyTorch backend, NVIDIA/TensorRT-LLM @ 00b6d5a)",
     kTrtllmClasses},
}};

// The list of `id`'s workers (Dynamo + TensorRT-LLM: TensorRT-LLM's), or nullptr.
const ClassList* ListOf(EngineId id) {
  const EngineId workers = CapabilitiesOf(id).workers;
  for (const ClassList& l : kLists)
    if (l.workers == workers) return &l;
  return nullptr;
}

bool Lists(const ClassList& l, std::string_view cls) {
  const std::string want = AsciiLower(cls);
  return std::any_of(l.classes.begin(), l.classes.end(),
                     [&](std::string_view c) { return AsciiLower(c) == want; });
}

}  // namespace

bool LoadsModelClass(EngineId id, const ModelSpec& m) {
  if (m.hf_class.empty()) return true;
  const ClassList* l = ListOf(id);
  return l == nullptr || !l->authoritative || Lists(*l, m.hf_class);
}

std::string ModelClassNote(EngineId id, const ModelSpec& m) {
  if (m.hf_class.empty()) return "";
  const ClassList* l = ListOf(id);
  if (l == nullptr || Lists(*l, m.hf_class)) return "";
  if (l->authoritative)
    return fmt::format("{} does not load {}: it is not in {}", EngineTitle(id), m.hf_class,
                       l->where);
  return fmt::format("{} is not in {}: it may run only through the AutoDeploy backend, if at all",
                     m.hf_class, l->where);
}

}  // namespace l2s::engine
