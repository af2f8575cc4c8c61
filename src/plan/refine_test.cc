// Batch refinement of a finished plan (plan/refine.h): a TPOT-bound plan moves to the largest
// batch within the limit, refinement never lowers a plan or makes it invalid (random strategies),
// and a disaggregated deployment's instances move to the largest batches the joint TTFT allows.
#include "plan/refine.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "search/sampling.h"
#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s {
namespace {

// kimi-k2 served 2,048 in / 512 out (TTFT 2 s, TPOT 50 ms) on 64 H100s, at the SGLang repair of
// the space's optimum: pp=2,tp=1,ep=32 with 480 expert slots and single-batch overlap, batch 16
// (the space's power of two below the limit). The decode step grows with the batch from 43.4 ms
// at 16 (`l2s eval ... --batch N`), so the largest batch within the TPOT is 21 or 22 or 23; the refinement takes the one the simulator's auto batch bisects to,
// which meets the TPOT while the next batch does not, and gives more tokens/s per GPU.
TEST(RefineBatch, MovesATpotBoundPlanToTheLargestBatchWithinTheLimit) {
  const Simulator sim(testing::RealServe("kimi-k2", "h100", 64));
  Strategy s = *FromText("pp=2,tp=1,dp=32,ep=32,batch=16,slots=480,overlap=sbo", 64);
  Evaluation e = sim.Evaluate(s);
  ASSERT_TRUE(e.valid()) << sim.Reason(s, e);
  EXPECT_NEAR(e.tpot_s * 1e3, 43.37, 0.05);
  const double before = e.tokens_per_s_per_gpu;
  ASSERT_TRUE(RefineBatch(sim, &s, &e));
  EXPECT_TRUE(e.valid());
  EXPECT_EQ(e.batch, s.batch);
  EXPECT_GE(s.batch, 21);
  EXPECT_LT(s.batch, 24);
  EXPECT_LE(e.tpot_s * 1e3, 50.0);
  EXPECT_GT(e.tokens_per_s_per_gpu, before);
  const Evaluation next = sim.EvaluateAtBatch(s, s.batch + 1);
  EXPECT_EQ(next.verdict, Verdict::kTpot);
  // Refined again: nothing left to gain.
  EXPECT_FALSE(RefineBatch(sim, &s, &e));
}

// Invariant over random strategies of a small MoE serve problem with squeezed memory and binding
// SLOs: a refined plan is valid, never below the plan it came from, and at the simulator's auto
// batch; an invalid plan is left as it is.
TEST(RefineBatch, NeverLowersOrInvalidatesAPlan) {
  Problem p = testing::MakeProblem(testing::TinyMoe(4), 8, Mode::kServe);
  p.workload.max_batch = 256;
  testing::SqueezeMemory(&p, 0.8);
  testing::BindSlo(&p, /*ttft=*/false, 2.0);
  const Simulator sim(p);
  SpaceOptions o;
  o.max_batch = 64;
  const StrategySpace space = *StrategySpace::Make(p.model, p.cluster.num_gpus, o);
  Rng rng(7);
  MaskedSampler sampler(space);
  std::vector<int> idx;
  int refined = 0, valid = 0;
  for (int i = 0; i < 300; ++i) {
    sampler.Sample(rng, &idx);
    Strategy s = space.Decode(idx);
    Evaluation e = sim.Evaluate(s);
    const Strategy s0 = s;
    const Evaluation e0 = e;
    const bool changed = RefineBatch(sim, &s, &e);
    if (!e0.valid()) {
      EXPECT_FALSE(changed);
      continue;
    }
    ++valid;
    EXPECT_TRUE(e.valid());
    EXPECT_GE(e.tokens_per_s_per_gpu, e0.tokens_per_s_per_gpu);
    if (changed) {
      ++refined;
      Strategy a = s0;
      a.batch = 0;
      EXPECT_EQ(s.batch, sim.Evaluate(a).batch);
      EXPECT_GT(e.tokens_per_s_per_gpu, e0.tokens_per_s_per_gpu);
    } else {
      EXPECT_EQ(s, s0);
    }
  }
  // (142 of the 300 are valid, 135 of those refined: the checks above ran.)
  EXPECT_GT(valid, 100);
  EXPECT_GT(refined, 100);
  EXPECT_LT(refined, valid);
}

// The candidates a plan refines: per strategy up to its batch, the best valid evaluation seen;
// best first, ties in the order added.
TEST(EvaluatedStrategies, KeepsTheBestValidBatchOfEachStrategy) {
  auto eval = [](double v, bool valid) {
    Evaluation e;
    e.verdict = valid ? Verdict::kValid : Verdict::kMemory;
    e.tokens_per_s_per_gpu = v;
    return e;
  };
  const Strategy a8 = *FromText("pp=1,tp=2,dp=4,ep=1,batch=8", 8);
  const Strategy a16 = *FromText("pp=1,tp=2,dp=4,ep=1,batch=16", 8);
  const Strategy a32 = *FromText("pp=1,tp=2,dp=4,ep=1,batch=32", 8);
  const Strategy b8 = *FromText("pp=2,tp=2,dp=2,ep=1,batch=8", 8);
  const Strategy c8 = *FromText("pp=1,tp=8,dp=1,ep=1,batch=8", 8);
  EvaluatedStrategies k;
  k.Add(a8, eval(10, true));
  k.Add(a16, eval(12, true));
  k.Add(a32, eval(20, false));  // invalid: not kept
  k.Add(b8, eval(11, true));
  k.Add(c8, eval(11, true));    // ties b8: after it
  k.Add(a8, eval(10, true));    // worse than a16: a16 stays
  ASSERT_EQ(k.size(), 3u);
  const auto v = k.Sorted();
  EXPECT_EQ(v[0].first, a16);
  EXPECT_EQ(v[0].second.tokens_per_s_per_gpu, 12);
  EXPECT_EQ(v[1].first, b8);
  EXPECT_EQ(v[2].first, c8);
}

// deepseek-v3 disaggregated on 256 H100s (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) at the exact
// optimum of the joint space (1,416.10 tokens/s per GPU, prefill-bound: 16-GPU prefill instances
// at pp=16, batch 8, 1,627.0 ms per prefill; 16-GPU decode instances at pp=1,tp=2,ep=16, batch 256,
// TPOT 37.95 ms, 97.9 ms per step). The refined deployment is valid, at least as good, no
// instance's batch is lower, and a batch one higher for either instance than the refinement
// chose breaks the deployment or exceeds what its simulator's auto batch allows. (It refines to
// prefill batch 9, 1,824.1 ms per prefill, and decode batch 272, 102.5 ms per step: TTFT
// 1,929.4 ms, 1,420.99 tokens/s per GPU, `l2s plan ... --serving disagg --search
// "rl(warm=0)"` before issue 47, seed 0.)
TEST(RefineDisaggBatches, RaisesTheInstancesWithinTheJointLimits) {
  const Problem serve = testing::RealServe("deepseek-v3", "h100", 256);
  auto dm = std::move(DisaggModel::Make(SharedSetup(serve))).value();
  JointSpace::Point p;
  p.gp = 16;
  p.gd = 16;
  p.prefill = *FromText(
      "pp=16,tp=1,dp=1,ep=1,batch=8,sp=off,embed=dim1,attn_qkv=none,attn_core=dim0,"
      "attn_out=dim0,moe_router=dim0,moe_ffn1=dim0,moe_ffn2=dim0,shared_ffn1=dim1,"
      "shared_ffn2=none,dense_ffn1=none,dense_ffn2=none,lm_head=dim1",
      16);
  p.decode = *FromText(
      "pp=1,tp=2,dp=8,ep=16,batch=256,sp=on,overlap=sbo,mtp=2,embed=none,attn_qkv=none,"
      "attn_core=none,attn_out=dim0,moe_router=none,moe_ffn1=dim1,moe_ffn2=dim0,shared_ffn1=none,"
      "shared_ffn2=none,dense_ffn1=none,dense_ffn2=none,lm_head=dim1",
      16);
  DisaggEvaluation e = dm->Evaluate(p.gp, p.prefill, p.gd, p.decode);
  ASSERT_TRUE(e.valid()) << e.reason;
  EXPECT_NEAR(e.tokens_per_s_per_gpu, 1416.64, 0.01);
  EXPECT_EQ(e.bottleneck, "prefill");
  const JointSpace::Point p0 = p;
  const DisaggEvaluation e0 = e;
  const bool changed = RefineDisaggBatches(*dm, &p, &e);
  EXPECT_TRUE(e.valid());
  EXPECT_GE(e.tokens_per_s_per_gpu, e0.tokens_per_s_per_gpu);
  EXPECT_GE(p.prefill.batch, p0.prefill.batch);
  EXPECT_GE(p.decode.batch, p0.decode.batch);
  EXPECT_EQ(e.prefill.eval.batch, p.prefill.batch);
  EXPECT_EQ(e.decode.eval.batch, p.decode.batch);
  if (changed) {
    EXPECT_GT(e.tokens_per_s_per_gpu, e0.tokens_per_s_per_gpu);
    EXPECT_GT(e.ttft_s, e0.ttft_s);  // a larger batch takes longer
    EXPECT_LE(e.ttft_s * 1e3, 2000.0);
    EXPECT_LE(e.tpot_s * 1e3, 50.0);
  }
  if (p.decode.batch > p0.decode.batch) {
    Strategy up = p.decode;
    up.batch += 1;
    const Evaluation eu = dm->DecodeSim(p.gd).EvaluateAtBatch(up, up.batch);
    const DisaggEvaluation cu =
        dm->Combine(p.gp, p.prefill, e.prefill.eval, p.gd, up, eu);
    Strategy a = p.decode;
    a.batch = 0;
    EXPECT_TRUE(!cu.valid() || up.batch > dm->DecodeSim(p.gd).Evaluate(a).batch);
  }
  if (p.prefill.batch > p0.prefill.batch) {
    Strategy up = p.prefill;
    up.batch += 1;
    const Evaluation eu = dm->PrefillSim(p.gp).EvaluateAtBatch(up, up.batch);
    const DisaggEvaluation cu = dm->Combine(p.gp, up, eu, p.gd, p.decode, e.decode.eval);
    Strategy a = p.prefill;
    a.batch = 0;
    EXPECT_TRUE(!cu.valid() || up.batch > dm->PrefillSim(p.gp).Evaluate(a).batch);
  }
  EXPECT_TRUE(changed);
  EXPECT_EQ(p.prefill.batch, 9);
  EXPECT_EQ(p.decode.batch, 272);
  EXPECT_NEAR(e.tokens_per_s_per_gpu, 1421.30, 0.01);
  // Refined again: nothing left to gain.
  EXPECT_FALSE(RefineDisaggBatches(*dm, &p, &e));
}

// A prefill-bound deployment (Llama-3.1-70B in FP8 on 8 H100s, 1,024 in / 256 out: 2-GPU tp=2 prefill
// instances at batch 8, 2-GPU tp=2 decode instances at batch 256) has decode capacity to spare:
// lowered, the decode batch is the smallest that keeps the tokens/s per GPU, with a shorter TPOT
// and TTFT; one below it loses throughput (or the deployment); lowering again changes nothing.
TEST(LowerDisaggBatches, SpendsASparePoolsCapacityOnLatency) {
  Problem serve = testing::RealServe("llama-3.1-70b", "h100", 8);
  serve.workload.isl = 1024;
  serve.workload.osl = 256;
  serve.workload.weight = DType::kFP8;
  serve.workload.kv = DType::kFP8;
  auto dm = std::move(DisaggModel::Make(SharedSetup(serve))).value();
  JointSpace::Point p;
  p.gp = 2;
  p.gd = 2;
  p.prefill = *FromText("pp=1,tp=2,dp=1,ep=1,batch=8,sp=off", 2);
  p.decode = *FromText("pp=1,tp=2,dp=1,ep=1,batch=256,sp=off", 2);
  DisaggEvaluation e = dm->Evaluate(p.gp, p.prefill, p.gd, p.decode);
  ASSERT_TRUE(e.valid()) << e.reason;
  ASSERT_EQ(e.bottleneck, "prefill");
  ASSERT_GT(e.decode.spare, 0.05);
  const JointSpace::Point p0 = p;
  const DisaggEvaluation e0 = e;
  ASSERT_TRUE(LowerDisaggBatches(*dm, &p, &e));
  EXPECT_TRUE(e.valid());
  EXPECT_NEAR(e.tokens_per_s_per_gpu, e0.tokens_per_s_per_gpu, 1e-9 * e0.tokens_per_s_per_gpu);
  EXPECT_LT(p.decode.batch, p0.decode.batch);
  EXPECT_EQ(e.decode.eval.batch, p.decode.batch);
  EXPECT_LT(e.tpot_s, e0.tpot_s);
  EXPECT_LT(e.ttft_s, e0.ttft_s);
  EXPECT_LT(e.decode.spare, e0.decode.spare);
  EXPECT_EQ(p.prefill.batch, p0.prefill.batch);  // the binding pool keeps its batch
  // One lower loses throughput or validity.
  Strategy down = p.decode;
  down.batch -= 1;
  const Evaluation ed = dm->DecodeSim(p.gd).EvaluateAtBatch(down, down.batch);
  const DisaggEvaluation cd = dm->Combine(p.gp, p.prefill, e.prefill.eval, p.gd, down, ed);
  EXPECT_TRUE(!cd.valid() ||
              cd.tokens_per_s_per_gpu < e0.tokens_per_s_per_gpu * (1 - 1e-12));
  EXPECT_FALSE(LowerDisaggBatches(*dm, &p, &e));
}

}  // namespace
}  // namespace l2s
