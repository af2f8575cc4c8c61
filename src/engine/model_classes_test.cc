// Model-class lists: ATOM's is a rule (a class outside it does not load), TensorRT-LLM's a hint;
// models without a class and engines without a list are never restricted.
#include "engine/model_classes.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace l2s::engine {
namespace {

ModelSpec WithClass(const char* cls) {
  ModelSpec m = *ModelPreset("llama-3.1-8b");
  m.hf_class = cls;
  return m;
}

TEST(ModelClasses, AtomLoadsOnlyItsRegistry) {
  EXPECT_TRUE(LoadsModelClass(EngineId::kAtom, WithClass("DeepseekV3ForCausalLM")));
  EXPECT_EQ(ModelClassNote(EngineId::kAtom, WithClass("DeepseekV3ForCausalLM")), "");
  const ModelSpec qwen2 = WithClass("Qwen2ForCausalLM");
  EXPECT_FALSE(LoadsModelClass(EngineId::kAtom, qwen2));
  EXPECT_EQ(ModelClassNote(EngineId::kAtom, qwen2),
            "ATOM does not load Qwen2ForCausalLM: it is not in ATOM's model runner "
            "(support_model_arch_dict, ROCm/ATOM @ 00afbe3)");
}

TEST(ModelClasses, TensorRtLlmsListIsAHint) {
  const ModelSpec dots = WithClass("Dots1ForCausalLM");
  EXPECT_TRUE(LoadsModelClass(EngineId::kTrtllm, dots));
  EXPECT_EQ(ModelClassNote(EngineId::kTrtllm, dots),
            "Dots1ForCausalLM is not in TensorRT-LLM's supported-models page (PyTorch backend, "
            "NVIDIA/TensorRT-LLM @ 00b6d5a): it may run only through the AutoDeploy backend, if "
            "at all");
  // Dynamo's TensorRT-LLM workers read the same list.
  EXPECT_EQ(ModelClassNote(EngineId::kDynamoTrtllm, dots), ModelClassNote(EngineId::kTrtllm, dots));
  // The page spells DeepSeek-V2's class DeepSeekV2ForCausalLM: compared without case.
  EXPECT_EQ(ModelClassNote(EngineId::kTrtllm, WithClass("DeepseekV2ForCausalLM")), "");
}

TEST(ModelClasses, NoClassOrNoListMeansNoRestriction) {
  const ModelSpec none = WithClass("");
  const ModelSpec odd = WithClass("SomethingNewForCausalLM");
  for (EngineId id : kLaunchEngines) {
    EXPECT_TRUE(LoadsModelClass(id, none));
    EXPECT_EQ(ModelClassNote(id, none), "");
  }
  for (EngineId id : {EngineId::kVllm, EngineId::kSglang, EngineId::kDynamoVllm,
                      EngineId::kDynamoSglang, EngineId::kMegatron, EngineId::kIdeal}) {
    EXPECT_TRUE(LoadsModelClass(id, odd));
    EXPECT_EQ(ModelClassNote(id, odd), "");
  }
  // Every preset of a released model is loaded by every engine with a list, except where the
  // list says otherwise (ATOM: Llama 4; TensorRT-LLM's page names them all).
  for (const std::string& n : ModelPresetNames()) {
    const ModelSpec m = *ModelPreset(n);
    EXPECT_EQ(m.hf_class.empty(), m.synthetic) << n;
    EXPECT_EQ(ModelClassNote(EngineId::kTrtllm, m), "") << n;
    EXPECT_EQ(LoadsModelClass(EngineId::kAtom, m), m.architecture != "llama4") << n;
  }
}

}  // namespace
}  // namespace l2s::engine
