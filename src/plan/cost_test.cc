// Cost and energy (plan/cost.h): hand-derived numbers.
#include "plan/cost.h"

#include <gtest/gtest.h>

namespace l2s::plan {
namespace {

ClusterSpec Cluster(double price, double tdp_w) {
  ClusterSpec c;
  c.num_gpus = 8;
  c.gpu.tdp_w = tdp_w;
  c.price_per_gpu_hour = price;
  return c;
}

TEST(Cost, ServeCountsPromptAndOutputTokens) {
  Workload w;
  w.mode = Mode::kServe;
  w.isl = 2048;
  w.osl = 512;
  // 1,000 output tokens/s per GPU at $2/GPU-h and 700 W: $2 / 3600 s / 1000 tok/s = $0.5556 per
  // million output tokens; input+output = 1000 x 2560 / 512 = 5000 tok/s -> $0.1111/Mtok;
  // 1000 / 700 = 1.4286 output tokens per joule, 5000 / 700 = 7.1429 in all.
  const Cost c = CostOf(1000, w, Cluster(2.0, 700), 8);
  EXPECT_DOUBLE_EQ(c.total_tokens_per_s_per_gpu, 5000);
  ASSERT_TRUE(c.usd_per_mtok_output && c.usd_per_mtok_total && c.usd_per_hour);
  EXPECT_NEAR(*c.usd_per_mtok_output, 0.555556, 1e-6);
  EXPECT_NEAR(*c.usd_per_mtok_total, 0.111111, 1e-6);
  EXPECT_DOUBLE_EQ(*c.usd_per_hour, 16);
  ASSERT_TRUE(c.tokens_per_joule_output && c.tokens_per_joule_total && c.power_w);
  EXPECT_NEAR(*c.tokens_per_joule_output, 1.428571, 1e-6);
  EXPECT_NEAR(*c.tokens_per_joule_total, 7.142857, 1e-6);
  EXPECT_DOUBLE_EQ(*c.power_w, 5600);
}

TEST(Cost, PrefillOutputIsTheFirstTokenOfEachRequest) {
  Workload w;
  w.mode = Mode::kPrefill;
  w.isl = 1000;
  // 50,000 input tokens/s per GPU = 50 requests/s per GPU, each one first token; $3.6/GPU-h =
  // $0.001/s: $0.02 per million input tokens, $20 per million output tokens.
  const Cost c = CostOf(50000, w, Cluster(3.6, 1000), 4);
  EXPECT_DOUBLE_EQ(c.output_tokens_per_s_per_gpu, 50);
  EXPECT_NEAR(*c.usd_per_mtok_total, 0.02, 1e-12);
  EXPECT_NEAR(*c.usd_per_mtok_output, 20, 1e-9);
  EXPECT_NEAR(*c.tokens_per_joule_total, 50, 1e-12);
}

TEST(Cost, DecodeTotalIsOutputAndUnknownsStayUnpriced) {
  Workload w;
  w.mode = Mode::kDecode;
  const Cost c = CostOf(300, w, Cluster(0, 0), 16);
  EXPECT_DOUBLE_EQ(c.total_tokens_per_s_per_gpu, 300);
  EXPECT_FALSE(c.price_per_gpu_hour || c.usd_per_mtok_output || c.usd_per_mtok_total);
  EXPECT_FALSE(c.power_w || c.tokens_per_joule_output);
  // No throughput (an invalid plan): nothing is priced.
  const Cost none = CostOf(0, w, Cluster(2, 700), 16);
  EXPECT_FALSE(none.usd_per_mtok_output || none.tokens_per_joule_output);
}

TEST(Cost, ClusterFileCarriesPriceAndPower) {
  auto c = ParseClusterJson(
      R"({"gpu": {"name": "h100", "tdp_w": 650}, "num_gpus": 16, "price_per_gpu_hour": 2.5})",
      "test.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->price_per_gpu_hour, 2.5);
  EXPECT_DOUBLE_EQ(c->gpu.tdp_w, 650);
  auto bad = ParseClusterJson(R"({"gpu": "h100", "num_gpus": 8, "price_per_gpu_hour": -1})", "t.json");
  EXPECT_FALSE(bad.ok());
  auto preset = MakeCluster("h100", 8);
  ASSERT_TRUE(preset.ok());
  EXPECT_GT(preset->gpu.tdp_w, 0);  // every preset states its board power
  EXPECT_EQ(preset->price_per_gpu_hour, 0);  // and no price
}

}  // namespace
}  // namespace l2s::plan
