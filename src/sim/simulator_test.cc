// Simulator: hand-derived bounds, memory rejection with the right figures, monotonicity
// properties, and the fast evaluation against a slow per-layer reference.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <random>

#include "sim/kernels.h"
#include "strategy/space.h"
#include "strategy/test_models.h"
#include "strategy/test_strategies.h"

namespace l2s {
namespace {

using testing::H100s;
using testing::MegatronStrategy;
using testing::RandomStrategy;

Problem MakeProblem(ModelSpec m, int gpus, Mode mode = Mode::kDecode) {
  Problem p;
  p.model = std::move(m);
  p.cluster = H100s(gpus);
  p.workload.mode = mode;
  p.workload.weight = p.model.weight_dtype;
  return p;
}

TEST(Simulator, Llama8bDecodeBoundedByWeightReads) {
  // One decode step at batch 1 must read every weight once: Llama-3.1-8B has ~8.03e9 params; the
  // hand-built spec counts embeddings + lm_head 2 x 128256 x 4096 = 1.051e9 and 32 layers x
  // (4096 x 6144 + 4096 x 4096 + 3 x 4096 x 14336) = 32 x 218.1e6 = 6.979e9 -> 8.03e9 params,
  // 16.06e9 B in bf16. The embedding table is only looked up (one row per token), so the bytes a
  // step must stream are (8.03e9 - 0.525e9) x 2 = 15.01e9 B -> >= 15.01e9 / 3.35e12 = 4.48 ms.
  Problem p = MakeProblem(testing::Llama8B(), 1);
  p.workload.context = 1024;
  Simulator sim(p);
  const Evaluation e = sim.Evaluate(MegatronStrategy(1, 1, 1, 1, 1));
  ASSERT_TRUE(e.valid()) << sim.Reason(MegatronStrategy(1, 1, 1, 1, 1), e);
  const double streamed = (8.03e9 - 128256.0 * 4096) * 2;
  const double bound_s = streamed / 3.35e12;
  EXPECT_GE(e.tpot_s, bound_s);
  // ...and a well-fitted kernel model is not far above it (HBM efficiency ~85-90% + overheads).
  EXPECT_LE(e.tpot_s, bound_s * 1.6);
  EXPECT_NEAR(e.tokens_per_s, 1.0 / e.tpot_s, 1e-9 / e.tpot_s);
}

TEST(Simulator, Llama70bBf16DoesNotFitOneH100) {
  // Weights: 2 x 128256 x 8192 (embed + lm_head) + 80 x (8192 x 10240 + 8192^2 + 3 x 8192 x 28672)
  // = 2.101e9 + 68.448e9 = 70.549e9 params x 2 B = 141.10e9 B = 131.4 GiB > 80 GiB.
  Problem p = MakeProblem(testing::Llama70B(), 1);
  p.workload.context = 1024;
  Simulator sim(p);
  const Strategy s = MegatronStrategy(1, 1, 1, 1, 1);
  const Evaluation e = sim.Evaluate(s);
  EXPECT_EQ(e.verdict, Verdict::kMemory);
  EXPECT_NEAR(e.weight_bytes / kGiB, 131.4, 0.05);
  const std::string r = sim.Reason(s, e);
  EXPECT_NE(r.find("of 80.0 GiB per GPU"), std::string::npos) << r;
  EXPECT_NE(r.find("weights 131.4"), std::string::npos) << r;
  // On 8 GPUs with tp=8 it fits: 131.4 / 8 = 16.4 GiB of weights each.
  Problem p8 = MakeProblem(testing::Llama70B(), 8);
  p8.workload.context = 1024;
  Simulator sim8(p8);
  const Evaluation e8 = sim8.Evaluate(MegatronStrategy(1, 8, 1, 1, 8));
  EXPECT_TRUE(e8.valid()) << sim8.Reason(MegatronStrategy(1, 8, 1, 1, 8), e8);
  EXPECT_NEAR(e8.weight_bytes / kGiB, 131.4 / 8, 0.05);
}

TEST(Simulator, StructurallyInvalidHasReason) {
  Simulator sim(MakeProblem(testing::Llama70B(), 8));
  const Strategy s = MegatronStrategy(1, 3, 2, 1, 8);  // 6 GPUs, tp=3 does not divide 64 heads
  const Evaluation e = sim.Evaluate(s);
  EXPECT_EQ(e.verdict, Verdict::kStructure);
  EXPECT_FALSE(sim.Reason(s, e).empty());
}

TEST(Simulator, MonotoneInBandwidthContextAndBatch) {
  std::mt19937_64 rng(3);
  const ModelSpec models[] = {testing::Llama70B(), testing::DeepSeekV3(), testing::GptMoe(8)};
  for (const ModelSpec& m : models) {
    const int gpus = 16;
    SpaceOptions so;
    so.max_batch = 64;
    auto space = StrategySpace::Make(m, gpus, so);
    ASSERT_TRUE(space.ok()) << space.status().message();
    Problem base = MakeProblem(m, gpus);
    base.workload.context = 2048;
    Problem fast = base;
    fast.cluster.gpu.hbm_bw *= 1.5;
    Problem longer = base;
    longer.workload.context = 8192;
    Simulator s0(base), s1(fast), s2(longer);
    for (int i = 0; i < 300; ++i) {
      Strategy s = RandomStrategy(*space, rng);
      const int b = 1 + static_cast<int>(rng() % 32);
      const Evaluation e0 = s0.EvaluateAtBatch(s, b);
      const Evaluation e1 = s1.EvaluateAtBatch(s, b);
      const Evaluation e2 = s2.EvaluateAtBatch(s, b);
      const Evaluation e3 = s0.EvaluateAtBatch(s, b + 1);
      EXPECT_LE(e1.stage_s, e0.stage_s * (1 + 1e-12)) << ToText(s);
      EXPECT_GE(e2.stage_s, e0.stage_s * (1 - 1e-12)) << ToText(s);
      EXPECT_GE(e3.stage_s, e0.stage_s * (1 - 1e-12)) << ToText(s);
    }
  }
}

// Slow reference: walk every layer of every stage, cost each one's steps from scratch, and
// account memory per stage, without the prefix-sum shortcuts of the fast path.
struct Ref {
  double stage_s = 0, mem = 0;
};
Ref Reference(const Simulator& sim, const Strategy& s, int batch) {
  const Problem& p = sim.problem();
  Simulator::Detail d;
  sim.Explain(s, batch, &d);
  const Program& prog = d.program;
  const int L = p.model.num_layers;
  Ref r;
  r.stage_s = 0;
  double act = 0;
  for (int k = 0; k < prog.num_kinds; ++k) act = std::max(act, prog.layers[k].act_bytes);
  act = std::max({act, prog.embed.act_bytes, prog.lm_head.act_bytes}) * 2;
  // A section's seconds from its steps: compute + comm, or with two-batch overlap (the program
  // is one half batch) 2 max(stretch x compute, comm).
  const bool tbo = s.overlap == Overlap::kTbo;
  auto section = [&](const Section& sec, const double* step_s) {
    double c = 0, a = 0;
    for (int i = 0; i < sec.num_steps; ++i)
      (sec.steps[i].kind == StepKind::kComm ? a : c) += step_s[i];
    return tbo ? 2 * std::max(c * sim.OverlapStretch(), a) : c + a;
  };
  for (int st = 0; st < s.pp; ++st) {
    double t = 0, w = 0, kv = 0;
    for (int layer = st * L / s.pp; layer < (st + 1) * L / s.pp; ++layer) {
      const int k = LayerKindIndex(p.model, layer, prog);
      t += section(prog.layers[k], d.layer_step_s[k].data());
      w += prog.layers[k].weight_bytes;
      kv += prog.layers[k].kv_bytes * s.pp;
    }
    if (st == 0) {
      t += section(prog.embed, d.embed_step_s.data());
      w += prog.embed.weight_bytes;
    }
    if (st == s.pp - 1) {
      t += section(prog.lm_head, d.lm_head_step_s.data());
      w += prog.lm_head.weight_bytes;
    }
    if (s.pp > 1) t += section(prog.pipe, d.pipe_step_s.data());
    r.stage_s = std::max(r.stage_s, t);
    r.mem = std::max(r.mem, w + kv + act);
  }
  return r;
}

TEST(Simulator, FastPathMatchesPerLayerReference) {
  std::mt19937_64 rng(5);
  const ModelSpec models[] = {testing::Llama70B(), testing::DeepSeekV3(), testing::GptMoe(12)};
  for (const ModelSpec& m : models) {
    const int gpus = 32;
    auto space = StrategySpace::Make(m, gpus, SpaceOptions{});
    ASSERT_TRUE(space.ok());
    for (Mode mode : {Mode::kDecode, Mode::kPrefill, Mode::kServe}) {
      Problem p = MakeProblem(m, gpus, mode);
      p.workload.context = 4096;
      p.workload.isl = 1024;
      p.workload.osl = 256;
      Simulator sim(p);
      for (int i = 0; i < 100; ++i) {
        const Strategy s = RandomStrategy(*space, rng);
        const int b = 1 + static_cast<int>(rng() % 16);
        const Evaluation e = sim.EvaluateAtBatch(s, b);
        const Ref r = Reference(sim, s, b);
        EXPECT_NEAR(e.stage_s, r.stage_s, 1e-9 * r.stage_s) << ToText(s);
        EXPECT_NEAR(e.mem_bytes - e.reserve_bytes, r.mem, 1e-9 * r.mem) << ToText(s);
        const double tput = s.dp * b / r.stage_s * (mode == Mode::kPrefill ? 1024.0 : 1.0);
        EXPECT_NEAR(e.tokens_per_s, tput, 1e-9 * tput);
        // The breakdown attributes exactly the slowest stage's time.
        EXPECT_NEAR(e.compute_s + e.comm_s, e.stage_s, 1e-9 * e.stage_s);
      }
    }
  }
}

TEST(Simulator, EvaluateWithoutBreakdownMatchesEvaluateOutsideTheBreakdown) {
  // The searchers' path skips only the attribution to operators: every other field equals
  // Evaluate's exactly, over random strategies, fixed and auto batches, every mode, with SLOs
  // that bind (serve) so that the auto batch's SLO bisection runs too.
  std::mt19937_64 rng(41);
  const ModelSpec models[] = {testing::Llama70B(), testing::DeepSeekV3(), testing::GptMoe(6)};
  int valid = 0, with_bd = 0;
  for (const ModelSpec& m : models) {
    auto space = StrategySpace::Make(m, 16, SpaceOptions{});
    ASSERT_TRUE(space.ok());
    for (Mode mode : {Mode::kDecode, Mode::kPrefill, Mode::kServe}) {
      Problem p = MakeProblem(m, 16, mode);
      if (mode == Mode::kServe) p.workload.tpot_ms = 40;
      Simulator sim(p);
      for (int i = 0; i < 100; ++i) {
        Strategy s = RandomStrategy(*space, rng);
        if (i % 2 == 0) s.batch = 0;
        const Evaluation a = sim.Evaluate(s), b = sim.EvaluateWithoutBreakdown(s);
        EXPECT_EQ(a.verdict, b.verdict) << ToText(s);
        EXPECT_EQ(a.batch, b.batch) << ToText(s);
        EXPECT_EQ(a.tokens_per_s, b.tokens_per_s) << ToText(s);
        EXPECT_EQ(a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu);
        EXPECT_EQ(a.ttft_s, b.ttft_s);
        EXPECT_EQ(a.tpot_s, b.tpot_s);
        EXPECT_EQ(a.stage_s, b.stage_s);
        EXPECT_EQ(a.slowest_stage, b.slowest_stage);
        EXPECT_EQ(a.mem_bytes, b.mem_bytes);
        EXPECT_EQ(a.weight_bytes, b.weight_bytes);
        EXPECT_EQ(a.kv_bytes, b.kv_bytes);
        EXPECT_EQ(a.accept, b.accept);
        EXPECT_EQ(a.mtp_s, b.mtp_s);
        EXPECT_EQ(a.adp_imbalance, b.adp_imbalance);
        EXPECT_EQ(b.compute_s + b.comm_s, 0.0);
        valid += a.valid() ? 1 : 0;
        with_bd += a.compute_s + a.comm_s > 0 ? 1 : 0;
      }
    }
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(with_bd, 100);  // Evaluate did attribute the time it was compared with
}

TEST(Simulator, AutoBatchFindsTheBestFeasibleBatch) {
  // Exhaustive over every batch 1..max_batch versus the auto search.
  std::mt19937_64 rng(9);
  const ModelSpec m = testing::Llama70B();
  auto space = StrategySpace::Make(m, 8, SpaceOptions{});
  ASSERT_TRUE(space.ok());
  for (Mode mode : {Mode::kDecode, Mode::kServe}) {
    Problem p = MakeProblem(m, 8, mode);
    p.workload.context = 8192;
    p.workload.isl = 2048;
    p.workload.osl = 512;
    p.workload.max_batch = 300;
    Simulator sim(p);
    for (int i = 0; i < 20; ++i) {
      Strategy s = RandomStrategy(*space, rng);
      s.batch = 0;
      double best = 0;
      for (int b = 1; b <= 300; ++b) {
        const Evaluation e = sim.EvaluateAtBatch(s, b);
        if (e.valid()) best = std::max(best, e.tokens_per_s);
      }
      const Evaluation a = sim.Evaluate(s);
      if (best == 0) {
        EXPECT_FALSE(a.valid());
        continue;
      }
      ASSERT_TRUE(a.valid()) << ToText(s);
      EXPECT_GE(a.tokens_per_s, best * 0.97) << ToText(s);
      EXPECT_LE(a.tokens_per_s, best * (1 + 1e-12));
    }
  }
}

// The decomposition the oracle relies on: per-operator attributions add up to the section totals,
// and changing the dims of one operator group leaves every other operator's attribution unchanged.
TEST(Simulator, OperatorGroupsAreSeparable) {
  std::mt19937_64 rng(21);
  const std::vector<std::vector<Op>> groups = {
      {Op::kEmbed}, {Op::kAttnQkv, Op::kAttnCore, Op::kAttnOut}, {Op::kMoeRouter},
      {Op::kMoeFfn1, Op::kMoeFfn2}, {Op::kSharedFfn1, Op::kSharedFfn2},
      {Op::kDenseFfn1, Op::kDenseFfn2}, {Op::kLmHead}};
  // Also the hybrid / sparse layer kinds (recurrent state, chunked scan, DSA indexer steps).
  const ModelSpec models[] = {testing::Llama70B(),  testing::DeepSeekV3(), testing::GptMoe(6),
                              testing::Qwen3Next(), testing::NemotronH(),  testing::DeepSeekV32()};
  for (const ModelSpec& m : models) {
    auto space = StrategySpace::Make(m, 16, SpaceOptions{});
    ASSERT_TRUE(space.ok());
    for (Mode mode : {Mode::kDecode, Mode::kServe}) {
      Problem p = MakeProblem(m, 16, mode);
      p.workload.isl = 512;
      p.workload.osl = 128;
      Simulator sim(p);
      for (int i = 0; i < 60; ++i) {
        Strategy a = RandomStrategy(*space, rng);
        const int b = 1 + static_cast<int>(rng() % 8);
        Simulator::Totals t;
        Simulator::OpTotals o;
        sim.ComputeTotals(a, b, &t);
        sim.ComputeOpTotals(a, b, &o);
        for (int k = 0; k < t.num_kinds; ++k) {
          double ts = 0, ws = 0;
          for (int op = 0; op < kNumOps; ++op) { ts += o.layer_s[k][op]; ws += o.layer_w[k][op]; }
          EXPECT_NEAR(ts, t.layer_s[k], 1e-12 * t.layer_s[k]);
          EXPECT_NEAR(ws, t.layer_w[k], 1e-9 * t.layer_w[k]);
          EXPECT_LE(t.layer_state[k], t.layer_kv[k]);
        }
        // Re-draw one group's dims; all other operators' attributions must stay identical.
        const auto& grp = groups[rng() % groups.size()];
        Strategy c = a;
        for (Op op : grp) c.set_dim(op, static_cast<Dim>(rng() % 3));
        Simulator::OpTotals oc;
        sim.ComputeOpTotals(c, b, &oc);
        for (int op = 0; op < kNumOps; ++op) {
          if (std::find(grp.begin(), grp.end(), static_cast<Op>(op)) != grp.end()) continue;
          for (int k = 0; k < t.num_kinds; ++k) {
            EXPECT_DOUBLE_EQ(o.layer_s[k][op], oc.layer_s[k][op]) << OpName(static_cast<Op>(op));
            EXPECT_DOUBLE_EQ(o.layer_w[k][op], oc.layer_w[k][op]) << OpName(static_cast<Op>(op));
            EXPECT_DOUBLE_EQ(o.ttft_layer_s[k][op], oc.ttft_layer_s[k][op]);
          }
          EXPECT_DOUBLE_EQ(o.embed_s[op], oc.embed_s[op]);
          EXPECT_DOUBLE_EQ(o.lm_s[op], oc.lm_s[op]);
        }
        if (std::find(grp.begin(), grp.end(), Op::kAttnCore) == grp.end()) {
          for (int k = 0; k < t.num_kinds; ++k) EXPECT_DOUBLE_EQ(o.layer_kv[k], oc.layer_kv[k]);
        }
      }
    }
  }
}

// Canonical() only rewrites choices without effect, so it never changes an evaluation.
TEST(Simulator, CanonicalStrategiesEvaluateIdentically) {
  std::mt19937_64 rng(31);
  const ModelSpec models[] = {testing::Llama70B(), testing::DeepSeekV3(), testing::GptMoe(6)};
  int changed = 0;
  for (const ModelSpec& m : models) {
    auto space = StrategySpace::Make(m, 16, SpaceOptions{});
    ASSERT_TRUE(space.ok());
    for (Mode mode : {Mode::kDecode, Mode::kServe}) {
      Simulator sim(MakeProblem(m, 16, mode));
      for (int i = 0; i < 300; ++i) {
        const Strategy s = RandomStrategy(*space, rng);
        const Strategy c = Canonical(m, s);
        changed += c == s ? 0 : 1;
        const int b = 1 + static_cast<int>(rng() % 8);
        const Evaluation es = sim.EvaluateAtBatch(s, b), ec = sim.EvaluateAtBatch(c, b);
        EXPECT_EQ(es.verdict, ec.verdict) << ToText(s);
        EXPECT_DOUBLE_EQ(es.stage_s, ec.stage_s) << ToText(s) << " vs " << ToText(c);
        EXPECT_DOUBLE_EQ(es.mem_bytes, ec.mem_bytes) << ToText(s);
        EXPECT_EQ(Canonical(m, c), c);  // idempotent
      }
    }
  }
  EXPECT_GT(changed, 100);  // the property was exercised on strategies it rewrites
}

TEST(Simulator, SloViolationsAreInvalidWithReason) {
  Problem p = MakeProblem(testing::Llama70B(), 8, Mode::kServe);
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.workload.tpot_ms = 0.001;  // impossible
  Simulator sim(p);
  const Strategy s = MegatronStrategy(1, 8, 1, 1, 0);
  const Evaluation e = sim.Evaluate(s);
  EXPECT_EQ(e.verdict, Verdict::kTpot);
  EXPECT_NE(sim.Reason(s, e).find("TPOT"), std::string::npos);
}


// ---- MTP speculative decoding (docs/COST_MODEL.md "MTP") ----

ModelSpec DeepSeekWithMtp() {
  ModelSpec m = testing::DeepSeekV3();
  m.mtp_layers = 1;
  return m;
}

// 8 H200s (DeepSeek-V3's FP8 weights need more than an H100's 80 GB at DEP8).
Problem DeepSeekOnH200s(Mode mode = Mode::kDecode) {
  Problem p = MakeProblem(DeepSeekWithMtp(), 8, mode);
  p.cluster.gpu = testing::H200Gpu();
  return p;
}

TEST(Simulator, MtpThroughputAndTpotFollowTheAcceptance) {
  // 8 H200s, DEP8, 16 sequences per rank, 2 draft tokens: the published curve gives 2.58 tokens
  // per step, so tokens/s = dp x batch x 2.58 / step and TPOT = step / 2.58.
  Problem p = DeepSeekOnH200s();
  p.workload.context = 2048;
  Strategy s = MegatronStrategy(1, 1, 8, 8, 16);
  ClearAbsentOps(p.model, &s);
  s.mtp = 2;
  {
    const Simulator sim(p);
    const Evaluation e = sim.EvaluateAtBatch(s, 16);
    ASSERT_EQ(e.verdict, Verdict::kValid) << sim.Reason(s, e);
    EXPECT_DOUBLE_EQ(e.accept, 2.58);
    EXPECT_NEAR(e.tokens_per_s, 8 * 16 * 2.58 / e.stage_s, 1e-9 * e.tokens_per_s);
    EXPECT_NEAR(e.tpot_s, e.stage_s / 2.58, 1e-12);
  }
  p.workload.mtp_accept = 2.2;  // stated acceptance replaces the curve
  const Simulator sim(p);
  EXPECT_DOUBLE_EQ(sim.EvaluateAtBatch(s, 16).accept, 2.2);
  p.workload.mtp_accept = 3.5;  // > mtp + 1: impossible
  const Simulator bad(p);
  const Evaluation eb = bad.EvaluateAtBatch(s, 16);
  EXPECT_EQ(eb.verdict, Verdict::kStructure);
  EXPECT_NE(bad.Reason(s, eb).find("mtp_accept"), std::string::npos) << bad.Reason(s, eb);
  EXPECT_DOUBLE_EQ(DefaultMtpAccept(0), 1.0);
  EXPECT_DOUBLE_EQ(DefaultMtpAccept(1), 1.92);
  EXPECT_DOUBLE_EQ(DefaultMtpAccept(5), 3.01);
  EXPECT_DOUBLE_EQ(DefaultMtpAccept(8), 3.01);  // the curve has flattened
}

TEST(Simulator, MtpVerifiesKPlusOneTokensAndPaysKDraftPasses) {
  Problem p = DeepSeekOnH200s();
  p.workload.context = 2048;
  Strategy s = MegatronStrategy(1, 1, 8, 8, 16);
  ClearAbsentOps(p.model, &s);
  s.mtp = 3;
  const Simulator sim(p);
  const Evaluation e = sim.EvaluateAtBatch(s, 16);
  ASSERT_TRUE(e.valid()) << sim.Reason(s, e);
  auto d = std::make_unique<Simulator::Detail>();
  sim.Explain(s, 16, d.get());
  const Program& prog = d->program;
  EXPECT_EQ(prog.tokens_per_rank, 16 * 4);  // main model: 16 sequences x (3 + 1) tokens
  ASSERT_EQ(prog.mtp_passes, 3);
  double one_pass = 0;
  bool saw_eh = false, saw_decode_attn = false;
  for (int i = 0; i < prog.mtp.num_steps; ++i) {
    const Step& st = prog.mtp.steps[i];
    one_pass += d->mtp_step_s[i];
    if (std::string(st.what) == "eh_proj") {
      // [16 tokens, 2h] x [2h, h], bf16 weights: 2 * 7168 * 7168 * 2 bytes.
      saw_eh = true;
      EXPECT_EQ(st.m, 16);
      EXPECT_DOUBLE_EQ(st.weight_bytes, 2.0 * 7168 * 7168 * 2);
    }
    if (st.kind == StepKind::kAttnDecode) {
      saw_decode_attn = true;
      EXPECT_EQ(st.q_len, 1);  // a draft pass proposes one token per sequence
    }
  }
  EXPECT_TRUE(saw_eh && saw_decode_attn);
  for (int k = 0; k < prog.num_kinds; ++k)
    for (int i = 0; i < prog.layers[k].num_steps; ++i)
      if (prog.layers[k].steps[i].kind == StepKind::kAttnDecode) {
        EXPECT_EQ(prog.layers[k].steps[i].q_len, 4);  // verification: 3 drafts + 1
      }
  EXPECT_NEAR(e.mtp_s, 3 * one_pass, 1e-12);
  // Memory: the module's weights (pp = 1: embedding and LM head shared) and its KV, once.
  Strategy s0 = s;
  s0.mtp = 0;
  const Evaluation e0 = sim.EvaluateAtBatch(s0, 16);
  EXPECT_NEAR(e.weight_bytes - e0.weight_bytes, prog.mtp.weight_bytes, 1.0);
  EXPECT_NEAR(e.kv_bytes - e0.kv_bytes, prog.mtp.kv_bytes, 1.0);
  EXPECT_GT(prog.mtp.kv_bytes, 0);
}

TEST(Simulator, MtpNeedsMtpLayers) {
  const Simulator sim(MakeProblem(testing::Llama8B(), 1));
  Strategy s = MegatronStrategy(1, 1, 1, 1, 4);
  ClearAbsentOps(sim.problem().model, &s);
  s.mtp = 1;
  const Evaluation e = sim.Evaluate(s);
  EXPECT_EQ(e.verdict, Verdict::kStructure);
  EXPECT_NE(sim.Reason(s, e).find("no MTP"), std::string::npos) << sim.Reason(s, e);
}

// ---- Engine limits and the attention-DP imbalance (docs/COST_MODEL.md "Engines") ----

TEST(Simulator, TokenBudgetLimitsTheBatch) {
  Problem p = MakeProblem(DeepSeekWithMtp(), 8);
  p.workload.engine = Engine::kTrtllm;
  p.workload.max_num_tokens = 512;
  Strategy s = MegatronStrategy(1, 1, 8, 8, 0);
  ClearAbsentOps(p.model, &s);
  s.mtp = 1;
  {
    // Decode: batch x (1 + 1) tokens <= 512 -> batch <= 256.
    const Simulator sim(p);
    EXPECT_EQ(sim.TokenBatchLimit(s), 256);
    EXPECT_LE(sim.Evaluate(s).batch, 256);
    const Evaluation e = sim.EvaluateAtBatch(s, 257);
    EXPECT_EQ(e.verdict, Verdict::kStructure);
    EXPECT_NE(sim.Reason(s, e).find("max_num_tokens"), std::string::npos) << sim.Reason(s, e);
  }
  // Serve, isl 1024 / osl 256, mtp 0: each sequence adds 1 decode token and 1024 / 256 = 4
  // prefill tokens to a step: 512 / 5 = 102.4 -> 102. SGLang runs prefill apart: 512.
  p.workload.mode = Mode::kServe;
  p.workload.isl = 1024;
  p.workload.osl = 256;
  s.mtp = 0;
  EXPECT_EQ(Simulator(p).TokenBatchLimit(s), 102);
  p.workload.engine = Engine::kSglang;
  EXPECT_EQ(Simulator(p).TokenBatchLimit(s), 512);
  p.workload.engine = Engine::kIdeal;
  p.workload.max_num_tokens = 0;
  EXPECT_EQ(Simulator(p).TokenBatchLimit(s), std::numeric_limits<int>::max());
  EXPECT_EQ(DefaultsOf(Engine::kTrtllm).max_num_tokens, 8192);
  Engine parsed = Engine::kIdeal;
  EXPECT_TRUE(ParseEngine("TensorRT-LLM v0.17", &parsed));
  EXPECT_EQ(parsed, Engine::kTrtllm);
  EXPECT_TRUE(ParseEngine("dynamo+trtllm", &parsed));
  EXPECT_EQ(parsed, Engine::kTrtllm);
  EXPECT_TRUE(ParseEngine("sglang-0.5.2", &parsed));
  EXPECT_EQ(parsed, Engine::kSglang);
  EXPECT_FALSE(ParseEngine("deepseek-internal", &parsed));
}

TEST(Simulator, AttentionDpImbalanceHandDerived) {
  // Llama-3.1-8B (dense: every step works on one rank's tokens) on 4 H100s, dp = 4, serve isl
  // 1024 / osl 256 at batch 8: each rank needs p = 8 x 1024 / 256 = 32 prefill tokens per step.
  //   bal = step with the prefill spread evenly (TensorRT-LLM with balancing: the ranks prefill
  //         in the same steps), d = the decode-only step (decode mode at the serve context
  //         1024 + 256 / 2 = 1152).
  // TensorRT-LLM without balancing, max_num_tokens 512: room = 512 - 8 = 504, f = 32 / 504,
  //   q = 1 - (1 - f)^4, step = d + (q / f) (bal - d).
  // SGLang (prefill steps apart), C = 512: u = 32 / 512, f = u / (1 + u), q = 1 - (1 - f)^4,
  //   step = (1 + u) d + q (1 + u) / u (bal - d).
  Problem p = MakeProblem(testing::Llama8B(), 4, Mode::kServe);
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.workload.max_num_tokens = 512;
  p.workload.engine = Engine::kTrtllm;
  Strategy s = MegatronStrategy(1, 1, 4, 1, 8);
  ClearAbsentOps(p.model, &s);
  p.workload.adp_balance = 1;
  const Evaluation bal = Simulator(p).EvaluateAtBatch(s, 8);
  ASSERT_TRUE(bal.valid());
  EXPECT_EQ(bal.adp_imbalance, 1);
  Problem pd = p;
  pd.workload.mode = Mode::kDecode;
  pd.workload.context = 1152;
  const double d = Simulator(pd).EvaluateAtBatch(s, 8).stage_s;
  ASSERT_GT(bal.stage_s, d);

  p.workload.adp_balance = 0;
  const Evaluation un = Simulator(p).EvaluateAtBatch(s, 8);
  const double f = 32.0 / 504.0, q = 1 - std::pow(1 - f, 4);
  EXPECT_NEAR(un.stage_s, d + q / f * (bal.stage_s - d), 1e-9 * un.stage_s);
  EXPECT_GT(un.adp_imbalance, 1);

  p.workload.engine = Engine::kSglang;
  p.workload.adp_balance = -1;
  const Evaluation sg = Simulator(p).EvaluateAtBatch(s, 8);
  const double u = 32.0 / 512.0, fs = u / (1 + u), qs = 1 - std::pow(1 - fs, 4);
  EXPECT_NEAR(sg.stage_s, (1 + u) * d + qs * (1 + u) / u * (bal.stage_s - d),
              1e-9 * sg.stage_s);
  // dp = 1 on TensorRT-LLM: nobody to wait for.
  Strategy s1 = MegatronStrategy(1, 4, 1, 1, 8);
  ClearAbsentOps(p.model, &s1);
  p.workload.engine = Engine::kTrtllm;
  EXPECT_EQ(Simulator(p).EvaluateAtBatch(s1, 8).adp_imbalance, 1);
}

}  // namespace
}  // namespace l2s
