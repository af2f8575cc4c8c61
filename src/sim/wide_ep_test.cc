// Wide expert parallelism: expert load model (moe_load.h), DeepEP node dedup, expert slots,
// overlap (sbo/tbo). Expected numbers are derived by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/collectives.h"
#include "sim/moe_load.h"
#include "sim/simulator.h"
#include "strategy/space.h"
#include "strategy/test_models.h"

namespace l2s {
namespace {

TEST(MoeLoad, NormalQuantile) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232, 1e-6);  // lower-tail branch
}

TEST(MoeLoad, SamplingTermByHand) {
  // copies 1024 over ep 8: mean 128 per rank; 1 + sqrt(2 ln 8) sqrt((7/8) / 128)
  //   = 1 + 2.039334 * 0.082680 = 1.168612.
  EXPECT_NEAR(MoeSamplingImbalance(1024, 8), 1.168612, 1e-6);
  EXPECT_EQ(MoeSamplingImbalance(1024, 1), 1.0);
}

TEST(MoeLoad, UniformPopularityEplbIsBalanced) {
  // sigma = 0: every expert has share 1/8. slots 10 over ep 2: two experts get a second replica
  // (loads 1/16 each), six keep 1/8; packing 5 slots per rank heaviest first gives each rank
  // 3 x 1/8 + 2 x 1/16 = 1/2, i.e. exactly the mean: factor 1.
  EXPECT_NEAR(MoeStaticImbalance(8, 2, 10, 0.0), 1.0, 1e-12);
  EXPECT_EQ(MoeStaticImbalance(8, 2, 0, 0.0), 1.0);
}

TEST(MoeLoad, RedundancyNeverHurtsAndEplbBeatsCheckpointOrder) {
  const double sigma = 1.3;
  const double ckpt = MoeStaticImbalance(256, 32, 0, sigma);
  const double e256 = MoeStaticImbalance(256, 32, 256, sigma);
  const double e288 = MoeStaticImbalance(256, 32, 288, sigma);
  const double e320 = MoeStaticImbalance(256, 32, 320, sigma);
  EXPECT_GT(ckpt, 1.2);  // skewed popularity in checkpoint order is visibly imbalanced
  EXPECT_LE(e256, ckpt);
  EXPECT_LE(e288, e256 + 1e-12);
  EXPECT_LE(e320, e288 + 1e-12);
  EXPECT_GE(e320, 1.0);
  // Total factor is clamped to ep and grows as the step routes fewer copies.
  const MoeLoad few{64, 256, 32, 288, sigma}, many{65536, 256, 32, 288, sigma};
  EXPECT_GT(MoeImbalance(few), MoeImbalance(many));
  EXPECT_LE(MoeImbalance(MoeLoad{1, 256, 32, 0, sigma}), 32.0);
}

TEST(DeepEp, RemoteDomainsPerToken) {
  // 8 copies over 4 domains: each other domain is hit with probability 1 - (3/4)^8 = 0.899887,
  // so 3 x 0.899887 = 2.699661 remote domains per token.
  EXPECT_NEAR(RemoteDomainsPerToken(8, 4), 2.699661, 1e-6);
  EXPECT_EQ(RemoteDomainsPerToken(8, 1), 0.0);
}

TEST(DeepEp, NormalKernelsSendEachTokenOncePerNode) {
  // Prefill-sized dispatch over 32 GPUs in 4 nodes: with node dedup the NIC carries
  // 2.70 / 8 of the copies instead of 24/32 of them, so it is cheaper than without fan-out.
  const ClusterSpec c = testing::H100s(32);
  const double bytes = 4096.0 * 8 * 7168;  // 4,096 tokens x top-8 x hidden 7168 x FP8
  const double dedup = CollectiveSeconds(c, CollKind::kDispatch, {32, 4, 8}, bytes, false);
  const double plain = CollectiveSeconds(c, CollKind::kDispatch, {32, 4, 0}, bytes, false);
  EXPECT_LT(dedup, plain);
  // Low-latency kernels send every copy directly: fan-out changes nothing.
  EXPECT_EQ(CollectiveSeconds(c, CollKind::kDispatch, {32, 4, 8}, bytes, true),
            CollectiveSeconds(c, CollKind::kDispatch, {32, 4, 0}, bytes, true));
}

Strategy Dep(int gpus, int batch) {
  Strategy s;
  s.tp = 1;
  s.dp = gpus;
  s.ep = gpus;
  s.batch = batch;
  s.dims = MegatronDims();
  return s;
}

TEST(ExpertSlots, ValidityAndHints) {
  const ModelSpec m = testing::DeepSeekV3();
  Strategy s = Dep(144, 8);
  Status st = CheckStrategy(m, 144, s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("slots=288"), std::string::npos) << st.message();
  s.slots = 288;  // 2 slots per GPU
  EXPECT_TRUE(CheckStrategy(m, 144, s).ok());
  s.slots = 200;
  EXPECT_NE(CheckStrategy(m, 144, s).message().find("below the 256"), std::string::npos);
  Strategy dense = Dep(8, 8);
  dense.ep = 1;
  dense.slots = 16;
  EXPECT_FALSE(CheckStrategy(testing::Llama8B(), 8, dense).ok());
  Strategy ov = Dep(8, 8);
  ov.ep = 1;
  ov.overlap = Overlap::kSbo;
  EXPECT_NE(CheckStrategy(m, 8, ov).message().find("overlap=sbo"), std::string::npos);
}

TEST(ExpertSlots, RedundantSlotsCostMemoryAndBalanceLoad) {
  // DeepSeek-V3 prefill on 32 H100s, DEP32: 288 slots hold 9 experts per GPU instead of 8, so
  // the expert weights per GPU grow by 9/8; EPLB placement lowers the busiest rank's load.
  Workload w;
  w.mode = Mode::kPrefill;
  w.isl = 4096;
  w.weight = DType::kFP8;
  Simulator sim({testing::DeepSeekV3(), testing::H100s(32), w});
  Strategy s = Dep(32, 4);
  const Evaluation base = sim.Evaluate(s);
  s.slots = 288;
  const Evaluation eplb = sim.Evaluate(s);
  ASSERT_TRUE(base.valid() && eplb.valid());
  EXPECT_GT(eplb.weight_bytes, base.weight_bytes);
  // 58 MoE layers x 1 extra expert x 3 x 7168 x 2048 FP8 bytes = 5.11e9 bytes more per GPU.
  EXPECT_NEAR(eplb.weight_bytes - base.weight_bytes, 58.0 * 3 * 7168 * 2048, 1e6);
  EXPECT_GT(eplb.tokens_per_s, base.tokens_per_s);
}

TEST(Overlap, SboHelpsDecodeTboCanLose) {
  Workload w;
  w.mode = Mode::kDecode;
  w.context = 2048;
  w.weight = DType::kFP8;
  Simulator sim({testing::DeepSeekV3(), testing::H100s(16), w});
  for (int batch : {1, 8, 64, 256}) {
    Strategy s = Dep(16, batch);
    const Evaluation none = sim.Evaluate(s);
    s.overlap = Overlap::kSbo;
    const Evaluation sbo = sim.Evaluate(s);
    EXPECT_LT(sbo.tpot_s, none.tpot_s) << batch;  // the down projection hides part of the combine
  }
  // Batch 1 per rank: halves of half a sequence re-read every weight twice; tbo loses.
  Strategy s = Dep(16, 1);
  const double none1 = sim.Evaluate(s).tpot_s;
  s.overlap = Overlap::kTbo;
  EXPECT_GT(sim.Evaluate(s).tpot_s, none1);
  // Long prefill: compute-bound halves hide most of the all-to-all; tbo wins.
  Workload pw = w;
  pw.mode = Mode::kPrefill;
  pw.isl = 4096;
  Simulator psim({testing::DeepSeekV3(), testing::H100s(16), pw});
  Strategy p = Dep(16, 4);
  const double none_p = psim.Evaluate(p).tokens_per_s;
  p.overlap = Overlap::kTbo;
  EXPECT_GT(psim.Evaluate(p).tokens_per_s, none_p);
}

TEST(Overlap, StretchFromSmCount) {
  // H100: 132 SMs, DeepEP's 20 taken: compute beside communication runs 132 / 112 = 1.178571x
  // slower. A GPU of unknown SM count gets no stretch.
  Workload w;
  Simulator sim({testing::DeepSeekV3(), testing::H100s(16), w});
  ClusterSpec c = testing::H100s(16);
  EXPECT_EQ(sim.OverlapStretch(), 1.0);  // testing::H100Gpu leaves sm_count unset
  c.gpu.sm_count = 132;
  Simulator sim132({testing::DeepSeekV3(), c, w});
  EXPECT_NEAR(sim132.OverlapStretch(), 132.0 / 112.0, 1e-12);
  // 2 max(1.178571 x 3, 4) = 8 (communication shows); 2 max(1.178571 x 4, 3) = 9.428571.
  EXPECT_NEAR(sim132.SectionSeconds(3, 4, true), 8.0, 1e-12);
  EXPECT_NEAR(sim132.SectionSeconds(4, 3, true), 2 * 4 * 132.0 / 112.0, 1e-12);
  EXPECT_EQ(sim132.SectionSeconds(4, 3, false), 7.0);
}

TEST(StrategyText, WideEpFieldsRoundTrip) {
  Strategy s = Dep(144, 8);
  s.slots = 288;
  s.overlap = Overlap::kTbo;
  s.mtp = 2;
  const std::string text = ToText(s);
  EXPECT_NE(text.find(",slots=288,overlap=tbo,mtp=2,"), std::string::npos) << text;
  StatusOr<Strategy> back = FromText(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(FromText("overlap=both").ok());
  EXPECT_FALSE(FromText("slots=-1").ok());
  EXPECT_FALSE(FromText("mtp=99").ok());
  // Defaults are not written (texts of dense plans stay as they were).
  EXPECT_EQ(ToText(Dep(8, 8)).find("slots"), std::string::npos);
}

TEST(SpaceHeads, SlotsAndOverlapMasksAreCompletable) {
  const ModelSpec m = testing::DeepSeekV3();
  StatusOr<StrategySpace> sp = StrategySpace::Make(m, 144);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  ASSERT_GE(sp->slots_head(), 0);
  // ep = 144 is an option only because 288 slots make it divide.
  bool has144 = false;
  for (int ep : sp->ep_options()) has144 |= ep == 144;
  EXPECT_TRUE(has144);
  EXPECT_EQ(sp->head_name(sp->slots_head()), "slots");
  EXPECT_EQ(sp->head_name(sp->overlap_head()), "overlap");
}

}  // namespace
}  // namespace l2s

namespace l2s {
namespace {

TEST(ActiveExperts, SmallBatchesReadOnlyTheExpertsTheyHit) {
  // DeepSeek-V3 decode, DEP8, batch 1 per rank: 8 tokens x top-8 = 64 copies over 8 ranks are
  // about 8 x imbalance copies per rank for its 32 experts, so only ~8-12 of them run; their
  // weights are all resident (memory unchanged), but far fewer are read than at batch 64.
  Workload w;
  w.mode = Mode::kDecode;
  w.context = 1024;
  w.weight = DType::kFP8;
  Simulator sim({testing::DeepSeekV3(), testing::H100s(8), w});
  Strategy s = Dep(8, 1);
  Simulator::Detail d1, d64;
  sim.Explain(s, 1, &d1);
  sim.Explain(s, 64, &d64);
  auto experts_up = [](const Simulator::Detail& d) {
    for (int k = 0; k < d.program.num_kinds; ++k)
      for (int i = 0; i < d.program.layers[k].num_steps; ++i)
        if (std::string(d.program.layers[k].steps[i].what) == "experts-up")
          return d.program.layers[k].steps[i];
    return Step{};
  };
  const Step a = experts_up(d1), b = experts_up(d64);
  EXPECT_LT(a.count, 16.0);                   // a minority of the 32 slots is hit
  EXPECT_GT(b.count, 31.9);                   // 64 x 8 copies hit (nearly) all 32
  EXPECT_DOUBLE_EQ(a.weight_bytes, b.weight_bytes);  // all 32 experts stay resident
  EXPECT_LT(sim.EvaluateAtBatch(s, 1).tpot_s, sim.EvaluateAtBatch(s, 64).tpot_s);
}

}  // namespace
}  // namespace l2s
