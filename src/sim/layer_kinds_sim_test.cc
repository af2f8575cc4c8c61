// The simulator on the hybrid / sparse layer kinds: per-step bytes and FLOPs of the new steps
// derived by hand, sharding of recurrent state by heads, sparse attention reading top-k keys,
// state vs KV memory at 128k context, and every shared HuggingFace config evaluated.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "model/counts.h"
#include "model/hf_config.h"
#include "sim/simulator.h"
#include "strategy/test_models.h"

namespace l2s {
namespace {

using testing::H100s;

// hidden 256, 8 heads of 32 (2 KV heads); layers: DeltaNet + dense FFN, full attention + dense.
ModelSpec TinyHybrid() {
  ModelSpec m;
  m.name = "tiny-hybrid";
  m.num_layers = 2;
  m.hidden_size = 256;
  m.vocab_size = 1000;
  m.num_heads = 8;
  m.num_kv_heads = 2;
  m.head_dim = 32;
  m.dense_ffn_size = 512;
  m.linear_key_heads = 4;
  m.linear_value_heads = 8;
  m.linear_key_dim = 32;
  m.linear_value_dim = 32;
  m.linear_conv_kernel = 4;
  m.layers.assign(2, LayerSpec{});
  m.layers[0].mixer = Mixer::kLinear;
  return m;
}

const Step* FindStep(const Section& sec, const std::string& what) {
  for (int i = 0; i < sec.num_steps; ++i)
    if (what == sec.steps[i].what) return &sec.steps[i];
  return nullptr;
}

Strategy Tp(int tp, int dp = 1) {
  Strategy s;
  s.tp = tp;
  s.dp = dp;
  s.dims = MegatronDims();  // attn_core dim0: heads split
  return s;
}

TEST(LayerKindsSim, DeltaNetDecodeReadsAndWritesItsStateOnce) {
  const ModelSpec m = TinyHybrid();
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  StepShape sh;
  sh.decode_seqs = 4;
  sh.decode_kv_len = 100000;  // the recurrent step does not depend on the context
  Program p;
  BuildProgram(m, H100s(1), Tp(1), sh, ProgramConfig{}, &p);
  ASSERT_EQ(p.num_kinds, 2);
  const Section& lin = p.layers[0];
  const Step* st = FindStep(lin, "deltanet-decode");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->kind, StepKind::kStream);
  // State per sequence: 8 heads x 32 x 32 = 8192 + conv (2 x 4 x 32 + 8 x 32 = 512 channels)
  // x 3 = 1536 -> 9728 elements x 2 B = 19456 B. Read + write for 4 sequences = 155648 B, plus
  // the in/out activations 4 x (in 2 x 128 + 2 x 256 + 2 x 8 = 784, out 256) x 2 B = 8320.
  EXPECT_DOUBLE_EQ(st->bytes, 155648.0 + 8320.0);
  // FLOPs: 4 x (6 x 8 x 32 x 32 = 49152 + conv 2 x 512 x 4 = 4096).
  EXPECT_DOUBLE_EQ(st->flops, 4.0 * (49152 + 4096));
  EXPECT_DOUBLE_EQ(lin.state_bytes, 4 * 19456.0);
  EXPECT_DOUBLE_EQ(lin.kv_bytes, lin.state_bytes);  // no KV cache in a linear layer
  EXPECT_EQ(FindStep(lin, "attn-decode"), nullptr);
  // The attention layer's KV grows with the context: 4 x 100000 x 2 x 2 x 32 x 2 B.
  EXPECT_DOUBLE_EQ(p.layers[1].kv_bytes, 4.0 * 100000 * 256);
  EXPECT_DOUBLE_EQ(p.layers[1].state_bytes, 0.0);

  // tp = 2 with attn_core on dim0: each GPU keeps half the heads' state.
  Program p2;
  BuildProgram(m, H100s(2), Tp(2), sh, ProgramConfig{}, &p2);
  EXPECT_DOUBLE_EQ(p2.layers[0].state_bytes, 4 * 19456.0 / 2);
  // attn_core = none: sequences split instead (2 each), whole state per sequence.
  Strategy s = Tp(2);
  s.set_dim(Op::kAttnCore, Dim::kNone);
  BuildProgram(m, H100s(2), s, sh, ProgramConfig{}, &p2);
  EXPECT_DOUBLE_EQ(p2.layers[0].state_bytes, 2 * 19456.0);
}

TEST(LayerKindsSim, DeltaNetPrefillIsAChunkedScan) {
  const ModelSpec m = TinyHybrid();
  StepShape sh;
  sh.prefill_seqs = 2;
  sh.prefill_len = 1000;
  Program p;
  BuildProgram(m, H100s(1), Tp(1), sh, ProgramConfig{}, &p);
  const Step* st = FindStep(p.layers[0], "deltanet-scan");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->kind, StepKind::kScan);
  // Per token per head: 4 x 32 x 32 = 4096 + 2 x (32 + 32) x (64 + 1) / 2 = 4160 -> 8256;
  // 8 heads -> 66048, + conv 4096 = 70144 per token; 2 x 1000 tokens.
  EXPECT_DOUBLE_EQ(st->flops, 2000.0 * 70144);
  // Costed as GEMMs of m = 2000 tokens, n = k = 32 carrying the same FLOPs.
  EXPECT_DOUBLE_EQ(2.0 * st->m * st->n * st->k * st->count, st->flops);
  // The same FLOPs per token as counts.h (mixer part).
  const double counts = LayerFlopsPerToken(m, m.layers[0], 1000, false) -
                        LayerFlopsPerToken(m, m.layers[0], 1000, true) +
                        6.0 * 8 * 32 * 32 + 4096;  // decode mixer FLOPs put back
  EXPECT_DOUBLE_EQ(counts, 70144.0);
}

TEST(LayerKindsSim, SparseAttentionReadsTopKPlusIndexer) {
  const ModelSpec m = testing::DeepSeekV32();
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  StepShape sh;
  sh.decode_seqs = 8;
  sh.decode_kv_len = 65536;
  Strategy s = Tp(8);
  s.ep = 8;
  Program p;
  BuildProgram(m, H100s(8), s, sh, ProgramConfig{}, &p);
  const Section& sec = p.layers[p.num_kinds - 1];
  const Step* attn = FindStep(sec, "mla-decode");
  ASSERT_NE(attn, nullptr);
  EXPECT_DOUBLE_EQ(attn->kv_len, 2048.0);  // top-k keys, not the 65536 of the context
  const Step* idx = FindStep(sec, "indexer-decode");
  ASSERT_NE(idx, nullptr);
  // 8 sequences x 65536 keys x 128 x 2 B of index keys; 8 of 64 index heads per GPU (dim0):
  // 2 x 8 x 65536 x 8 x 128 FLOPs.
  EXPECT_DOUBLE_EQ(idx->bytes, 8.0 * 65536 * 128 * 2);
  EXPECT_DOUBLE_EQ(idx->flops, 2.0 * 8 * 65536 * 8 * 128);
  // The cache holds every token: latent 512 + rope 64 + index key 128, x 2 B, 8 x 65536 tokens
  // (MLA's latent is replicated over the tp group).
  EXPECT_DOUBLE_EQ(sec.kv_bytes, 8.0 * 65536 * (512 + 64 + 128) * 2);

  // Dense MLA at the same context costs more per step than sparse once context >> top-k.
  Problem ps;
  ps.model = m;
  ps.cluster = H100s(8);
  ps.workload.context = 65536;
  ps.workload.weight = DType::kFP8;
  Problem pd = ps;
  for (LayerSpec& l : pd.model.layers) l.mixer = Mixer::kAttention;
  s.batch = 8;
  const Evaluation es = Simulator(ps).EvaluateAtBatch(s, 8);
  const Evaluation ed = Simulator(pd).EvaluateAtBatch(s, 8);
  EXPECT_LT(es.stage_s, ed.stage_s);
}

// Qwen3-Next's shape with every layer full attention: the "same-size full-attention model".
TEST(LayerKindsSim, HybridHoldsFarLessCacheAt128k) {
  const ModelSpec hybrid = testing::Qwen3Next();
  ASSERT_TRUE(ValidateModelSpec(hybrid).ok()) << ValidateModelSpec(hybrid).ToString();
  ModelSpec full = hybrid;
  for (LayerSpec& l : full.layers) l.mixer = Mixer::kAttention;
  Problem p;
  p.cluster = H100s(8);
  p.cluster.gpu = testing::H200Gpu();
  p.workload.context = 131072;
  Strategy s = Tp(8);
  s.ep = 8;
  p.model = hybrid;
  const Evaluation eh = Simulator(p).EvaluateAtBatch(s, 16);
  p.model = full;
  const Evaluation ef = Simulator(p).EvaluateAtBatch(s, 16);
  // Hybrid: 12 full layers x 131072 x 2 x 2 x 256 x 2 B = 3 GiB per sequence (KV heads
  // replicated over tp 8: 2 KV heads -> 1 per GPU); full: 48 layers -> 4x that.
  EXPECT_GT(eh.state_bytes, 0.0);
  EXPECT_EQ(ef.state_bytes, 0.0);
  EXPECT_LT(eh.kv_bytes + eh.state_bytes, 0.3 * (ef.kv_bytes + ef.state_bytes));
  // State is tiny next to the KV: 36 layers x 1097728 B per sequence over 8 GPUs.
  EXPECT_NEAR(eh.state_bytes, 16 * 36 * 1097728.0 / 8, 1.0);
}

TEST(LayerKindsSim, DeciLmLinearReplacementIsOneMatmul) {
  // Layer 0: attention and FFN each replaced by a 256 x 256 matrix; layer 1 unchanged.
  ModelSpec m = TinyHybrid();
  m.layers[0] = LayerSpec{};
  m.layers[0].mixer = Mixer::kNone;
  m.layers[0].attn_linear = true;
  m.layers[0].ffn = FfnKind::kNone;
  m.layers[0].ffn_linear = true;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  StepShape sh;
  sh.decode_seqs = 4;
  sh.decode_kv_len = 1000;
  Program p;
  BuildProgram(m, H100s(1), Tp(1), sh, ProgramConfig{}, &p);
  const Section& sec = p.layers[0];
  int linear = 0;
  for (int i = 0; i < sec.num_steps; ++i) {
    const Step& st = sec.steps[i];
    EXPECT_NE(st.kind, StepKind::kAttnDecode);
    if (std::string(st.what) != "linear") continue;
    ++linear;
    EXPECT_TRUE(st.op == Op::kAttnOut || st.op == Op::kDenseFfn2);
    EXPECT_DOUBLE_EQ(st.flops, 2.0 * 4 * 256 * 256);  // 4 tokens through 256 x 256
  }
  EXPECT_EQ(linear, 2);
  EXPECT_DOUBLE_EQ(sec.kv_bytes, 0.0);
  EXPECT_DOUBLE_EQ(sec.weight_bytes, 2.0 * 256 * 256 * 2);  // two bf16 matrices
}

TEST(LayerKindsSim, EverySharedConfigDescribesAndEvaluates) {
  const std::filesystem::path dir = std::filesystem::path(L2S_SHARED_DIR) / "models" / "hf";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no shared dir " << dir;
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() != ".json") continue;
    ++n;
    SCOPED_TRACE(f.path().filename().string());
    StatusOr<ModelSpec> m = LoadHfConfig(f.path().string());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ParamCounts c = CountParams(*m);
    EXPECT_GT(c.total, 0);
    EXPECT_GT(c.active, 0);
    EXPECT_LE(c.active, c.total);
    EXPECT_GT(FlopsPerTokenDecode(*m, 4096), 0.0);
    EXPECT_GE(KvBytesForSequence(*m, DType::kBF16, 4096) + StateBytesPerSequence(*m), 0.0);
    // Evaluate on 8 H200: tp 8 (ep 8 for MoE) where the heads divide, else dp 8.
    Problem p;
    p.model = *m;
    p.cluster = H100s(8);
    p.cluster.gpu = testing::H200Gpu();
    p.workload.weight = m->weight_dtype;
    p.workload.context = 4096;
    Strategy s = m->num_heads % 8 == 0 ? Tp(8) : Tp(1, 8);
    s.ep = m->is_moe() && m->num_experts % 8 == 0 ? 8 : 1;
    const Simulator sim(p);
    const Evaluation e = sim.Evaluate(s);
    EXPECT_NE(e.verdict, Verdict::kStructure) << sim.Reason(s, e);
    EXPECT_GT(e.mem_bytes, 0.0);
    if (e.valid()) {
      EXPECT_GT(e.tokens_per_s, 0.0);
      EXPECT_TRUE(std::isfinite(e.tpot_s));
    }
  }
  EXPECT_GE(n, 25);
}

}  // namespace
}  // namespace l2s
