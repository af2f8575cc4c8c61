// Hand-derived layout-algebra cases (arithmetic in comments) and invariants over random
// strategies.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "model/presets.h"
#include "strategy/program.h"
#include "strategy/space.h"
#include "strategy/test_models.h"
#include "strategy/test_strategies.h"

namespace l2s {
namespace {

using testing::MegatronStrategy;

ClusterSpec Hgx(int gpus) {
  ClusterSpec c;
  c.name = "test";
  c.gpu.name = "h100";
  c.num_gpus = gpus;
  c.gpus_per_domain = 8;
  return c;
}

struct CommSummary {
  std::vector<const Step*> comms;
  int Count(CommKind k) const {
    int n = 0;
    for (const Step* s : comms) n += s->comm == k ? 1 : 0;
    return n;
  }
};

CommSummary Comms(const Section& sec) {
  CommSummary out;
  for (int i = 0; i < sec.num_steps; ++i)
    if (sec.steps[i].kind == StepKind::kComm) out.comms.push_back(&sec.steps[i]);
  return out;
}

StepShape Decode(double batch, double ctx) {
  StepShape sh;
  sh.decode_seqs = batch;
  sh.decode_kv_len = ctx;
  sh.kv_hold_len = ctx;
  return sh;
}

TEST(Layout, Llama70bMegatronTp8HasTwoAllReducesPerLayer) {
  // Megatron at tp=8: qkv column-parallel (dim1) -> heads (dim0) -> o_proj row-parallel (dim0)
  // leaves partial sums: all-reduce #1. MLP up column-parallel, down row-parallel: all-reduce #2.
  // Each all-reduce carries the [T, 8192] bf16 activation: T = 32 decode tokens ->
  // 32 * 8192 * 2 B = 524,288 B.
  const ModelSpec m = testing::Llama70B();
  Program p;
  BuildProgram(m, Hgx(8), MegatronStrategy(1, 8, 1, 1, 32), Decode(32, 4096), ProgramConfig{}, &p);
  ASSERT_EQ(p.num_kinds, 1);
  const CommSummary c = Comms(p.layers[0]);
  ASSERT_EQ(c.comms.size(), 2u);
  for (const Step* s : c.comms) {
    EXPECT_EQ(s->comm, CommKind::kAllReduce);
    EXPECT_DOUBLE_EQ(s->comm_bytes, 32.0 * 8192 * 2);
    EXPECT_EQ(s->group_size, 8);
    EXPECT_EQ(s->group_domains, 1);
  }
  // Per-GPU weights of one layer: qkv 8192 x (64+16)*128 / 8 + o 8192*8192/8 + MLP 3 x 8192 x
  // 28672 / 8, all bf16: (83,886,080 + 67,108,864 + 704,643,072) / 8 * 2 B = 213,909,504 B.
  EXPECT_DOUBLE_EQ(p.layers[0].weight_bytes,
                   (8192.0 * 80 * 128 + 8192.0 * 8192 + 3.0 * 8192 * 28672) / 8 * 2);
  // KV: 8 KV heads / 8 GPUs = 1 head each; 32 seqs x 4096 tokens x 2 (K,V) x 128 x 2 B.
  EXPECT_DOUBLE_EQ(p.layers[0].kv_bytes, 32.0 * 4096 * 2 * 128 * 2);
}

TEST(Layout, PaperMlpVariantUsesTwoAllGathersInsteadOfAllReduce) {
  // Second MLP matmul split on its output (dim1): it needs the whole intermediate, so the
  // column-split [T, 28672] output of the first matmul is all-gathered (32*28672*2 = 1,835,008 B),
  // and its own output leaves split on features -> all-gather [T, 8192] (524,288 B) at the end.
  const ModelSpec m = testing::Llama70B();
  Strategy s = MegatronStrategy(1, 8, 1, 1, 32);
  s.dims = PaperMlpVariantDims();
  Program p;
  BuildProgram(m, Hgx(8), s, Decode(32, 4096), ProgramConfig{}, &p);
  const CommSummary c = Comms(p.layers[0]);
  ASSERT_EQ(c.comms.size(), 3u);  // attention all-reduce + two MLP all-gathers
  EXPECT_EQ(c.Count(CommKind::kAllReduce), 1);
  EXPECT_EQ(c.Count(CommKind::kAllGather), 2);
  std::vector<double> ag;
  for (const Step* st : c.comms)
    if (st->comm == CommKind::kAllGather) ag.push_back(st->comm_bytes);
  EXPECT_DOUBLE_EQ(ag[0], 32.0 * 28672 * 2);
  EXPECT_DOUBLE_EQ(ag[1], 32.0 * 8192 * 2);
  // The down-projection is now [8192... ] column-split: 28672 x 8192/8 per GPU.
}

TEST(Layout, SequenceParallelReplacesAllReducesWithReduceScatterAllGather) {
  // sp=on keeps the residual split on tokens: each block starts with an all-gather of [T, 8192]
  // (the column-parallel matmul needs whole rows) and ends with a reduce-scatter of the partial
  // sums. Per layer: 2 all-gathers + 2 reduce-scatters of 32*8192*2 = 524,288 B each.
  const ModelSpec m = testing::Llama70B();
  Strategy s = MegatronStrategy(1, 8, 1, 1, 32);
  s.sp = true;
  Program p;
  BuildProgram(m, Hgx(8), s, Decode(32, 4096), ProgramConfig{}, &p);
  const CommSummary c = Comms(p.layers[0]);
  EXPECT_EQ(c.comms.size(), 4u);
  EXPECT_EQ(c.Count(CommKind::kAllGather), 2);
  EXPECT_EQ(c.Count(CommKind::kReduceScatter), 2);
  for (const Step* st : c.comms) EXPECT_DOUBLE_EQ(st->comm_bytes, 32.0 * 8192 * 2);
}

TEST(Layout, DeepSeekDpAttentionEp8) {
  // tp=1, dp=8, ep=8 on 8 GPUs: attention runs whole on each GPU (no collective at all in the
  // attention block). MoE: each GPU dispatches its T=16 tokens' top-8 copies of the 7168-wide
  // hidden state in FP8 (1 B): 16*8*7168 = 917,504 B; the combine returns them in BF16:
  // 1,835,008 B. Each GPU holds 256/8 = 32 experts.
  const ModelSpec m = testing::DeepSeekV3();
  Strategy s = MegatronStrategy(1, 1, 8, 8, 16);
  ProgramConfig cfg;
  cfg.weight = DType::kFP8;
  cfg.dispatch = DType::kFP8;  // what the simulator sets for quantised experts
  Program p;
  BuildProgram(m, Hgx(8), s, Decode(16, 4096), cfg, &p);
  ASSERT_EQ(p.num_kinds, 2);
  const int moe = p.kinds[0].ffn == FfnKind::kMoe ? 0 : 1;
  const CommSummary c = Comms(p.layers[moe]);
  ASSERT_EQ(c.comms.size(), 2u);
  EXPECT_EQ(c.comms[0]->comm, CommKind::kDispatch);
  EXPECT_DOUBLE_EQ(c.comms[0]->comm_bytes, 16.0 * 8 * 7168 * 1);
  EXPECT_EQ(c.comms[1]->comm, CommKind::kCombine);
  EXPECT_DOUBLE_EQ(c.comms[1]->comm_bytes, 16.0 * 8 * 7168 * 2);
  for (int i = 0; i < p.layers[moe].num_steps; ++i) {
    const Step& st = p.layers[moe].steps[i];
    if (st.kind == StepKind::kGemm && st.op == Op::kMoeFfn1) {
      // 8 ranks x 16 tokens x top-8 / 8 ranks = 128 copies reach the rank's 32 experts; the
      // expected number hit is 32 (1 - (31/32)^128) = 31.4501 (ActiveExpertsOnly), and the 128
      // rows spread over them: 128 / 31.4501 = 4.0699 per GEMM.
      EXPECT_NEAR(st.count, 32.0 * (1.0 - std::pow(31.0 / 32.0, 128.0)), 1e-9);
      EXPECT_NEAR(st.count, 31.4501, 1e-4);
      EXPECT_NEAR(st.m * st.count, 128.0, 1e-9);
    }
  }
  const CommSummary dense = Comms(p.layers[1 - moe]);
  EXPECT_EQ(dense.comms.size(), 0u);
  // MLA latent cache per layer: 16 seqs x 4096 x (512 + 64) x 2 B (bf16 KV) = 75,497,472 B.
  EXPECT_DOUBLE_EQ(p.layers[moe].kv_bytes, 16.0 * 4096 * 576 * 2);
}

TEST(Layout, DeepSeekEp8ByAllGatherAndReduceScatter) {
  // vLLM's default backend (ProgramConfig::moe_gather) on the layout above: every GPU gathers the
  // 8 ranks' 16 tokens in bf16, 8 * 16 * 7168 * 2 = 1,835,008 B (the gathered output), and the
  // reduce-scatter's input is the same size; the expert GEMMs see the same 128 copies.
  const ModelSpec m = testing::DeepSeekV3();
  Strategy s = MegatronStrategy(1, 1, 8, 8, 16);
  ProgramConfig cfg;
  cfg.weight = DType::kFP8;
  cfg.dispatch = DType::kFP8;
  cfg.moe_gather = true;
  Program p;
  BuildProgram(m, Hgx(8), s, Decode(16, 4096), cfg, &p);
  const int moe = p.kinds[0].ffn == FfnKind::kMoe ? 0 : 1;
  const CommSummary c = Comms(p.layers[moe]);
  ASSERT_EQ(c.comms.size(), 2u);
  EXPECT_EQ(c.comms[0]->comm, CommKind::kAllGather);
  EXPECT_EQ(c.comms[0]->group_size, 8);
  EXPECT_DOUBLE_EQ(c.comms[0]->comm_bytes, 8.0 * 16 * 7168 * 2);
  EXPECT_EQ(c.comms[1]->comm, CommKind::kReduceScatter);
  EXPECT_DOUBLE_EQ(c.comms[1]->comm_bytes, 8.0 * 16 * 7168 * 2);
  for (int i = 0; i < p.layers[moe].num_steps; ++i) {
    const Step& st = p.layers[moe].steps[i];
    if (st.kind == StepKind::kGemm && st.op == Op::kMoeFfn1) {
      EXPECT_NEAR(st.m * st.count, 128.0, 1e-9);
    }
  }
}

TEST(Layout, CrossNodeGroupsAreMarked) {
  // tp=16 on 8-GPU nodes spans two NVLink domains.
  const ModelSpec m = testing::Llama70B();
  Program p;
  BuildProgram(m, Hgx(16), MegatronStrategy(1, 16, 1, 1, 8), Decode(8, 1024), ProgramConfig{}, &p);
  const CommSummary c = Comms(p.layers[0]);
  ASSERT_FALSE(c.comms.empty());
  for (const Step* s : c.comms) EXPECT_EQ(s->group_domains, 2);
  EXPECT_EQ(GroupDomains(8, 1, 8), 1);
  EXPECT_EQ(GroupDomains(4, 8, 8), 4);    // stride 8: one member per node
  EXPECT_EQ(GroupDomains(8, 2, 8), 2);    // stride 2: 4 per node
  EXPECT_EQ(GroupDomains(72, 1, 72), 1);  // NVL72
}

// Independent conversion table for the invariant below.
Layout Req(Dim d) {
  return d == Dim::kDim0 ? Layout::kFeatures : d == Dim::kDim1 ? Layout::kReplicated : Layout::kTokens;
}

// Every GEMM's input requirement is met: it arrived in the required layout, or replicated (a
// free slice), or a collective converting exactly arrived -> required sits right before it.
void CheckRequirements(const Section& sec, const Strategy& s) {
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    if (st.kind != StepKind::kGemm || st.group_size <= 1) continue;
    const Layout need = Req(s.dim(st.op));
    if (st.from == need || st.from == Layout::kReplicated) continue;
    ASSERT_GT(i, 0);
    const Step& prev = sec.steps[i - 1];
    ASSERT_EQ(prev.kind, StepKind::kComm) << OpName(st.op) << " " << st.what;
    EXPECT_EQ(prev.from, st.from);
    EXPECT_EQ(prev.to, need);
  }
}

// Sum over all GPUs of per-GPU weight bytes == model weights x replication implied by the
// strategy, for a dense GQA model (every weight is in a matmul of the tp group except embedding).
TEST(Layout, RandomStrategiesConserveWeightsAndMeetRequirements) {
  const ModelSpec m = testing::Llama70B();
  std::mt19937_64 rng(7);
  const int tps[] = {1, 2, 4, 8};
  for (int iter = 0; iter < 3000; ++iter) {
    const int tp = tps[rng() % 4];
    const int dp = 1 + rng() % 3;
    Strategy s;
    s.tp = tp; s.dp = dp; s.pp = 1; s.ep = 1; s.batch = 1 + rng() % 64;
    s.sp = rng() % 2;
    for (int o = 0; o < kNumOps; ++o) s.dims[o] = static_cast<Dim>(rng() % 3);
    Program p;
    BuildProgram(m, Hgx(tp * dp), s, Decode(s.batch, 2048), ProgramConfig{}, &p);
    CheckRequirements(p.layers[0], s);
    CheckRequirements(p.lm_head, s);
    // Replication per op: a split op (dim0/dim1) has one copy per tp group -> dp copies in the
    // stage; a "none" op has tp*dp copies. KV projections under dim1 with 8 KV heads < tp never
    // happen here (tp <= 8).
    auto copies = [&](Op op) { return (tp > 1 && s.dim(op) != Dim::kNone) ? dp : tp * dp; };
    const double h = 8192, ffn = 28672, V = 128256;
    const double qkv = h * (64 + 16) * 128, o = 64 * 128 * h, mlp_up = 2 * h * ffn, mlp_dn = ffn * h;
    const double expect_layer = 2.0 * (qkv * copies(Op::kAttnQkv) + o * copies(Op::kAttnOut) +
                                       mlp_up * copies(Op::kDenseFfn1) + mlp_dn * copies(Op::kDenseFfn2));
    EXPECT_NEAR(p.layers[0].weight_bytes * tp * dp, expect_layer, expect_layer * 1e-12);
    const double expect_emb = 2.0 * V * h * copies(Op::kEmbed);
    EXPECT_NEAR(p.embed.weight_bytes * tp * dp, expect_emb, expect_emb * 1e-12);
    const double expect_lm = 2.0 * V * h * copies(Op::kLmHead);
    EXPECT_NEAR(p.lm_head.weight_bytes * tp * dp, expect_lm, expect_lm * 1e-12);
  }
}

// Same for MoE experts: summed over the stage, expert weights = E experts x (1 copy if split
// inside the expert-TP group, etp copies if "none").
TEST(Layout, RandomMoeStrategiesConserveExpertWeights) {
  const ModelSpec m = testing::GptMoe(4);
  std::mt19937_64 rng(11);
  const int Gs[] = {1, 2, 4, 8, 16, 32};
  for (int iter = 0; iter < 3000; ++iter) {
    const int G = Gs[rng() % 6];
    int tp = 1;
    while (tp * 2 <= G && rng() % 2) tp *= 2;
    int ep = 1;
    while (ep * 2 <= std::min(G, 16) && rng() % 2) ep *= 2;
    Strategy s;
    s.tp = tp; s.dp = G / tp; s.ep = ep; s.pp = 1; s.batch = 1 + rng() % 32;
    s.sp = rng() % 2;
    for (int o = 0; o < kNumOps; ++o) s.dims[o] = static_cast<Dim>(rng() % 3);
    Program p;
    BuildProgram(m, Hgx(G), s, Decode(s.batch, 1024), ProgramConfig{}, &p);
    double expert_w = 0;
    for (int i = 0; i < p.layers[0].num_steps; ++i) {
      const Step& st = p.layers[0].steps[i];
      if (st.op == Op::kMoeFfn1 || st.op == Op::kMoeFfn2) expert_w += st.weight_bytes;
    }
    const int etp = G / ep;
    auto copies = [&](Op op) { return (etp > 1 && s.dim(op) != Dim::kNone) ? 1 : etp; };
    const double one = 12288.0 * 49152 * 2;  // one matrix of one expert, bf16
    const double expect = 16 * one * (copies(Op::kMoeFfn1) + copies(Op::kMoeFfn2));
    EXPECT_NEAR(expert_w * G, expect, expect * 1e-12) << ToText(s);
  }
}

}  // namespace
}  // namespace l2s

namespace l2s {
namespace {

TEST(Layout, DeepSeekV4DecodeKeysAndKvPerLayerKind) {
  // deepseek-v4-flash, tp=1, dp=8, ep=8, 4 sequences at context 65,536 (window 128):
  // ratio 0 attends 128 keys and holds 128 x 512 x 2 B per sequence; ratio 4 attends
  // 128 + min(16384, 512) = 640 keys, the indexer scans 16,384 pooled keys, and holds
  // 128 x 512 + 16384 x (512 + 128) elements; ratio 128: 128 + 512 keys, 128 x 512 + 512 x 512.
  StatusOr<ModelSpec> m = ModelPreset("deepseek-v4-flash");
  ASSERT_TRUE(m.ok());
  Program p;
  BuildProgram(*m, Hgx(8), MegatronStrategy(1, 1, 8, 8, 4), Decode(4, 65536), ProgramConfig{},
               &p);
  ASSERT_EQ(p.num_kinds, 3);  // ratios 0, 4, 128
  int checked = 0;
  for (int k = 0; k < p.num_kinds; ++k) {
    const LayerKind& kind = p.kinds[k];
    const int r = kind.compress_ratio;
    const double keys = r == 0 ? 128 : 640;  // ratio 4 and ratio 128 both 128 + 512
    const double held = 128.0 * 512 + (r == 4 ? 16384.0 * 640 : r == 128 ? 512.0 * 512 : 0);
    EXPECT_DOUBLE_EQ(p.layers[k].kv_bytes, 4 * held * 2) << r;
    for (int i = 0; i < p.layers[k].num_steps; ++i) {
      const Step& st = p.layers[k].steps[i];
      if (st.kind == StepKind::kAttnDecode) {
        EXPECT_DOUBLE_EQ(st.kv_len, keys) << r;
        EXPECT_TRUE(st.mla);
        EXPECT_DOUBLE_EQ(st.latent_dim + st.rope_dim, 512);
        ++checked;
      }
      if (st.kind == StepKind::kStream && std::string(st.what) == "indexer-decode") {
        EXPECT_DOUBLE_EQ(st.kv_len, 16384) << r;
      }
    }
  }
  EXPECT_EQ(checked, p.num_kinds);
}

}  // namespace
}  // namespace l2s
