// Issue 44 item 8: DeepSeek-V4 (model_type deepseek_v4) through the binary. `l2s describe` of a
// small V4 config prints the per-layer-kind KV figures derived by hand in
// src/model/deepseek_v4_test.cc; `l2s describe` and `l2s plan` run on the deepseek-v4-flash preset.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_l2s.h"

namespace {

using l2s_cli_test::Result;
using l2s_cli_test::RunL2s;
using l2s_cli_test::TempPath;
using nlohmann::json;

// The small config of src/model/deepseek_v4_test.cc (layers of ratio 0 / 4 / 128 / 4).
std::string WriteSmallConfig() {
  const json j = {{"model_type", "deepseek_v4"}, {"hidden_size", 64},
                  {"num_hidden_layers", 4},      {"num_attention_heads", 4},
                  {"num_key_value_heads", 1},    {"head_dim", 32},
                  {"qk_rope_head_dim", 8},       {"q_lora_rank", 16},
                  {"o_lora_rank", 8},            {"o_groups", 2},
                  {"sliding_window", 8},         {"compress_ratios", {0, 4, 128, 4, 0}},
                  {"index_topk", 4},             {"index_n_heads", 2},
                  {"index_head_dim", 16},        {"hc_mult", 2},
                  {"n_routed_experts", 8},       {"num_experts_per_tok", 2},
                  {"n_shared_experts", 1},       {"moe_intermediate_size", 32},
                  {"num_hash_layers", 1},        {"num_nextn_predict_layers", 1},
                  {"vocab_size", 100},           {"max_position_embeddings", 4096}};
  const std::string path = TempPath("l2s_dsv4") + ".json";
  std::ofstream(path) << j.dump();
  return path;
}

TEST(DeepseekV4Cli, DescribeNamesThePresetsClass) {
  const Result r = RunL2s({"describe", "--model", "deepseek-v4-flash", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["hf_class"], "DeepseekV4ForCausalLM");
}

TEST(DeepseekV4Cli, DescribeSmallConfigKvByLayerKind) {
  const std::string path = WriteSmallConfig();
  const Result r = RunL2s({"describe", "--model", path, "--context", "300", "--json"});
  std::remove(path.c_str());
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  // 512 (window layer) + 2 x 7712 (ratio 4) + 640 (ratio 128) bytes at context 300, bf16.
  EXPECT_DOUBLE_EQ(j["kv_bytes_per_sequence"].get<double>(), 16576.0);
  EXPECT_EQ(j["hf_class"], "");  // the small config names no class (architectures)
  const json& kinds = j["layer_kinds"];
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0]["compress_ratio"], 0);
  EXPECT_EQ(kinds[1]["compress_ratio"], 4);
  EXPECT_EQ(kinds[1]["layers"], 2);
  EXPECT_EQ(kinds[2]["compress_ratio"], 128);
  EXPECT_DOUBLE_EQ(kinds[0]["kv_bytes_per_token"].get<double>(), 64.0);
  EXPECT_DOUBLE_EQ(kinds[1]["kv_bytes_per_token"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(kinds[2]["kv_bytes_per_token"].get<double>(), 0.5);
}

TEST(DeepseekV4Cli, DescribeFlashPreset) {
  const Result r = RunL2s({"describe", "--model", "deepseek-v4-flash"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("window 128 + 4x top-512"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("window 128 + 128x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DeepSeek-V4, 64 heads x 512"), std::string::npos) << r.out;
}

TEST(DeepseekV4Cli, PlanRunsOnFlashAndSmallConfig) {
  const Result r = RunL2s({"plan", "--model", "deepseek-v4-flash", "--gpu", "h100", "--gpus", "8",
                           "--context", "65536", "--search", "rw", "--budget", "200",
                           "--engine", "ideal", "--no-baselines", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["problem"]["model"], "deepseek-v4-flash");
  EXPECT_GT(j["best"]["tokens_per_s_per_gpu"].get<double>(), 0.0) << j["best"].dump();

  const std::string path = WriteSmallConfig();
  const Result s = RunL2s({"plan", "--model", path, "--gpu", "h100", "--gpus", "2", "--context",
                           "1024", "--search", "rw", "--budget", "100", "--engine", "ideal",
                           "--no-baselines", "--json"});
  std::remove(path.c_str());
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_GT(json::parse(s.out)["best"]["tokens_per_s_per_gpu"].get<double>(), 0.0);
}

}  // namespace
