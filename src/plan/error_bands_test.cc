// The error band a plan states (plan/error_bands.h): the regime rule, the lookup of the
// generated table, and the notes on what is unmeasured.
#include "plan/error_bands.h"

#include <gtest/gtest.h>

#include "search/test_util.h"

namespace l2s::plan {
namespace {

Strategy Degrees(int pp, int tp, int dp, int ep) {
  Strategy s;
  s.pp = pp;
  s.tp = tp;
  s.dp = dp;
  s.ep = ep;
  return s;
}

TEST(ErrorBands, RegimeNamesStrategiesAsValidateNamesRows) {
  ModelSpec dense;  // num_experts 0
  ModelSpec moe;
  moe.num_experts = 64;
  // A dense model's dp replicas are independent instances of the tp layout.
  EXPECT_EQ(RegimeOf(dense, Degrees(1, 4, 2, 1), false), "tp-only");
  EXPECT_EQ(RegimeOf(moe, Degrees(1, 1, 8, 8), false), "attention-dp+ep");
  EXPECT_EQ(RegimeOf(moe, Degrees(1, 8, 1, 8), false), "tp+ep");
  EXPECT_EQ(RegimeOf(moe, Degrees(1, 2, 4, 1), false), "attention-dp");
  EXPECT_EQ(RegimeOf(moe, Degrees(1, 8, 1, 8), true), "disagg");
}

TEST(ErrorBands, TheGeneratedTableHoldsTheMeasuredGpus) {
  // measurements.csv alone has 79 H100 TensorRT-LLM rows: the pooled h100 group is larger.
  const std::optional<ErrorBand> h100 = FindErrorBand("gpu", "h100");
  ASSERT_TRUE(h100.has_value());
  EXPECT_GE(h100->rows, 79);
  EXPECT_GT(h100->median_abs_pct, 0);
  EXPECT_LE(h100->share_within_25pct, 1.0);
  EXPECT_FALSE(FindErrorBand("gpu", "a100").has_value());  // no measured A100 deployment
  EXPECT_FALSE(FindErrorBand("regime", "h100").has_value());
}

TEST(ErrorBands, PipelineAndUnmeasuredGpusAreSaid) {
  Problem p = testing::RealServe("llama-3.1-70b", "h100", 16);
  const Uncertainty flat = UncertaintyOf(p, Degrees(1, 8, 2, 1), false, 1);
  EXPECT_TRUE(flat.unmeasured.empty());
  ASSERT_TRUE(flat.gpu.has_value());
  const Uncertainty piped = UncertaintyOf(p, Degrees(2, 8, 1, 1), false, 2);
  ASSERT_EQ(piped.unmeasured.size(), 1u);
  EXPECT_NE(piped.unmeasured[0].find("pipeline parallelism (pp=2)"), std::string::npos)
      << piped.unmeasured[0];
  p.cluster.gpu.name = "a100";
  const Uncertainty a100 = UncertaintyOf(p, Degrees(1, 8, 2, 1), false, 1);
  EXPECT_FALSE(a100.gpu.has_value());
  ASSERT_EQ(a100.unmeasured.size(), 1u);
  EXPECT_EQ(a100.unmeasured[0], "a100: no measured deployment in ../shared");
  const std::vector<std::string> lines = UncertaintyLines(a100);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("calibration  ", 0), 0u);
  EXPECT_NE(lines[1].find("this GPU: none; regime tp-only: "), std::string::npos) << lines[1];
  EXPECT_TRUE(a100.unmodelled.empty());
}

// Speculation with a draft model has no measured row: said, with the acceptance it assumed. An
// MTP model's speculation (measured rows in the frontier file) is not.
TEST(ErrorBands, DraftModelSpeculationIsSaidUnmeasured) {
  Problem p = testing::RealServe("llama-3.1-70b", "h100", 16);
  ASSERT_TRUE(AttachDraftModel("org/draft", &p.model).ok());
  Strategy s = Degrees(1, 8, 2, 1);
  EXPECT_TRUE(UncertaintyOf(p, s, false, 1).unmeasured.empty());  // mtp 0: the draft is unused
  s.mtp = 2;
  Uncertainty u = UncertaintyOf(p, s, false, 1);
  ASSERT_EQ(u.unmeasured.size(), 1u);
  EXPECT_EQ(u.unmeasured[0],
            "speculation with the draft model org/draft (mtp=2): no measured row in ../shared; "
            "priced as an EAGLE-3 draft, accepting as DeepSeek's MTP does (--mtp-accept states "
            "your draft's)");
  p.workload.mtp_accept = 2.4;
  u = UncertaintyOf(p, s, false, 1);
  ASSERT_EQ(u.unmeasured.size(), 1u);
  EXPECT_NE(u.unmeasured[0].find("accepting the stated 2.4 tokens per step"), std::string::npos)
      << u.unmeasured[0];
  Problem ds = testing::RealServe("deepseek-v3", "h200", 8);
  EXPECT_TRUE(UncertaintyOf(ds, s, false, 1).unmeasured.empty());
}

// A multimodal checkpoint's tower is said to be outside the plan, on its own line.
TEST(ErrorBands, AnUnmodelledVisionTowerIsSaid) {
  Problem p = testing::RealServe("llama-3.1-70b", "h100", 16);
  p.model.vision_tower = true;
  const Uncertainty u = UncertaintyOf(p, Degrees(1, 8, 2, 1), false, 1);
  ASSERT_EQ(u.unmodelled.size(), 1u);
  const std::vector<std::string> lines = UncertaintyLines(u);
  EXPECT_EQ(lines.back(),
            "unmodelled   the checkpoint's vision / audio tower: the plan prices the language "
            "model on text tokens (count image tokens in the prompt length)");
}

}  // namespace
}  // namespace l2s::plan
