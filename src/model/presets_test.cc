// Presets: each released-model preset equals ParseHfConfig of its shared config file (so the
// numbers written into presets.cc cannot drift), and LoadModel's lookup order.
#include "model/presets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "model/hf_config.h"

namespace l2s {
namespace {

const std::string kShared = L2S_SHARED_DIR;

struct PresetFile {
  const char* preset;
  const char* file;  // under shared/models/hf
};

const PresetFile kFiles[] = {
    {"llama-3.1-8b", "meta-llama--Meta-Llama-3.1-8B.json"},
    {"llama-3.1-70b", "meta-llama--Meta-Llama-3.1-70B.json"},
    {"llama-3.1-405b", "meta-llama--Meta-Llama-3.1-405B.json"},
    {"mixtral-8x7b", "mistralai--Mixtral-8x7B-v0.1.json"},
    {"mixtral-8x22b", "mistralai--Mixtral-8x22B-v0.1.json"},
    {"qwen3-32b", "Qwen--Qwen3-32B.json"},
    {"qwen3-30b-a3b", "Qwen--Qwen3-30B-A3B.json"},
    {"qwen3-235b-a22b", "Qwen--Qwen3-235B-A22B.json"},
    {"deepseek-v3", "deepseek-ai--DeepSeek-V3.json"},
    {"kimi-k2", "moonshotai--Kimi-K2-Instruct.json"},
    {"gpt-oss-120b", "openai--gpt-oss-120b.json"},
    {"llama-4-maverick", "meta-llama--Llama-4-Maverick-17B-128E-Instruct.json"},
};

TEST(PresetsTest, EveryPresetIsValid) {
  const std::vector<std::string> names = ModelPresetNames();
  // + the two synthetic GPT-MoE models and deepseek-v4-flash (no shared file; deepseek_v4_test
  // checks it against a transcription of its config.json).
  EXPECT_EQ(names.size(), std::size(kFiles) + 3);
  for (const std::string& n : names) {
    StatusOr<ModelSpec> m = ModelPreset(n);
    ASSERT_TRUE(m.ok()) << n;
    EXPECT_EQ(m->name, n);
    EXPECT_TRUE(ValidateModelSpec(*m).ok()) << ValidateModelSpec(*m).ToString();
    EXPECT_EQ(m->synthetic, n.rfind("gpt-moe-", 0) == 0) << n;
  }
}

TEST(PresetsTest, PresetEqualsSharedConfig) {
  if (!std::filesystem::exists(kShared)) GTEST_SKIP() << "no shared dir at " << kShared;
  for (const PresetFile& pf : kFiles) {
    SCOPED_TRACE(pf.preset);
    const std::string path = kShared + "/models/hf/" + pf.file;
    StatusOr<ModelSpec> parsed = LoadHfConfig(path);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->name, path);
    StatusOr<ModelSpec> preset = ModelPreset(pf.preset);
    ASSERT_TRUE(preset.ok());
    ModelSpec p = *parsed;
    p.name = pf.preset;
    EXPECT_TRUE(p == *preset) << "preset " << pf.preset << " differs from " << pf.file;
    // Field-by-field for a readable failure.
    EXPECT_EQ(p.architecture, preset->architecture);
    EXPECT_EQ(p.num_layers, preset->num_layers);
    EXPECT_EQ(p.hidden_size, preset->hidden_size);
    EXPECT_EQ(p.num_heads, preset->num_heads);
    EXPECT_EQ(p.num_kv_heads, preset->num_kv_heads);
    EXPECT_EQ(p.head_dim, preset->head_dim);
    EXPECT_EQ(p.num_experts, preset->num_experts);
    EXPECT_EQ(p.dense_ffn_size, preset->dense_ffn_size);
    EXPECT_EQ(p.expert_ffn_size, preset->expert_ffn_size);
    EXPECT_EQ(p.weight_dtype, preset->weight_dtype);
    EXPECT_EQ(p.num_moe_layers(), preset->num_moe_layers());
  }
  // The shared folder also holds configs that have no preset (newer families); those are read
  // by hf_config_test, not here.
}

TEST(PresetsTest, LoadModelOrder) {
  StatusOr<ModelSpec> m = LoadModel("deepseek-v3");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->architecture, "deepseek_v3");

  // A path (and a checkpoint directory holding config.json).
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("l2s_presets_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "config.json")
        << R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
               "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100})";
  }
  StatusOr<ModelSpec> by_path = LoadModel((dir / "config.json").string());
  ASSERT_TRUE(by_path.ok()) << by_path.status().ToString();
  EXPECT_EQ(by_path->num_layers, 2);
  StatusOr<ModelSpec> by_dir = LoadModel(dir.string());
  ASSERT_TRUE(by_dir.ok()) << by_dir.status().ToString();
  std::filesystem::remove_all(dir);

  StatusOr<ModelSpec> bad = LoadModel("llama-9000");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
  EXPECT_NE(bad.status().message().find("llama-9000"), std::string::npos);
  for (const std::string& n : ModelPresetNames())
    EXPECT_NE(bad.status().message().find(n), std::string::npos) << n;
  EXPECT_EQ(ModelPreset("nope").status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace l2s
