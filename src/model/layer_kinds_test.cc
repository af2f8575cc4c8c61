// Per-kind parameter counts, KV / state bytes and FLOPs derived by hand for small layers of
// every mixer and FFN kind (the derivation of each expected number is in the comment beside it).
#include <gtest/gtest.h>

#include "model/counts.h"

namespace l2s {
namespace {

// hidden 64, vocab 100, 4 heads of 16, 2 KV heads, gated dense FFN 128, one layer of `l`.
ModelSpec Small(LayerSpec l) {
  ModelSpec m;
  m.name = "small";
  m.num_layers = 1;
  m.hidden_size = 64;
  m.vocab_size = 100;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.dense_ffn_size = 128;
  m.layers = {l};
  return m;
}

LayerSpec Of(Mixer mixer, FfnKind ffn) {
  LayerSpec l;
  l.mixer = mixer;
  l.ffn = ffn;
  return l;
}

TEST(LayerKindsTest, GatedDeltaNet) {
  ModelSpec m = Small(Of(Mixer::kLinear, FfnKind::kDense));
  m.linear_key_heads = 2;
  m.linear_value_heads = 4;
  m.linear_key_dim = 8;
  m.linear_value_dim = 4;
  m.linear_conv_kernel = 4;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  const LayerSpec& l = m.layers[0];
  // kd = 2 x 8 = 16, vd = 4 x 4 = 16. in_proj_qkvz 64 x (2x16 + 2x16) = 4096, in_proj_ba
  // 64 x 2x4 = 512, out_proj 16 x 64 = 1024 -> 5632 matrices. conv over 2x16 + 16 = 48 channels
  // x 4 taps = 192, dt_bias + A_log 2 x 4 = 8, gated norm 4 -> 204. Total 5836.
  EXPECT_EQ(MixerParams(m, l), 5836);
  // No KV; state 4 heads x 8 x 4 = 128 + conv 48 x (4 - 1) = 144 -> 272 elements x 2 B = 544 B.
  EXPECT_EQ(KvBytesPerTokenOfLayer(m, l, DType::kBF16), 0.0);
  EXPECT_EQ(StateBytesOfLayer(m, l), 544.0);
  EXPECT_EQ(KvBytesForSequence(m, DType::kBF16, 1 << 20), 0.0);
  // Decode: weights 2 x (5632 + 3 x 64 x 128 = 24576) = 60416; state 6 x 4 x 8 x 4 = 768;
  // conv 2 x 48 x 4 = 384 -> 61568 whatever the context.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 100, true), 61568.0);
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 100000, true), 61568.0);
  // Prefill of 100 tokens, chunk 64: 4 x 4 x 8 x 4 = 512 + 2 x 4 x (8 + 4) x (64 + 1) / 2 = 3120
  // + conv 384 -> 4016, plus the weights' 60416.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 100, false), 60416.0 + 4016.0);
  // Prefill of 10 tokens: the chunk is the prompt: 512 + 2 x 4 x 12 x 11 / 2 = 528 -> + 384.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 10, false), 60416.0 + 512 + 528 + 384);
}

TEST(LayerKindsTest, Mamba2) {
  ModelSpec m = Small(Of(Mixer::kMamba, FfnKind::kNone));
  m.mamba_version = 2;
  m.mamba_heads = 4;
  m.mamba_head_dim = 8;
  m.mamba_state = 16;
  m.mamba_groups = 2;
  m.mamba_conv_kernel = 4;
  m.mamba_conv_bias = true;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  const LayerSpec& l = m.layers[0];
  // inner 4 x 8 = 32. in_proj 64 x (2 x 32 + 2 x 2 x 16 + 4 = 132) = 8448, out_proj 32 x 64 = 2048
  // -> 10496. conv over 32 + 64 = 96 channels: 96 x 4 + 96 bias = 480; dt_bias, A_log, D 3 x 4
  // = 12; gated norm 32 -> 524. Total 11020; one norm (the block's only sublayer) of 64.
  EXPECT_EQ(MixerParams(m, l), 11020);
  EXPECT_EQ(NormParamsOfLayer(m, l), 64);
  EXPECT_EQ(LayerParams(m, l), 11084);
  // State 4 x 16 x 8 = 512 + 96 x 3 = 288 -> 800 elements x 2 B = 1600 B.
  EXPECT_EQ(StateBytesOfLayer(m, l), 1600.0);
  // Decode: 2 x 10496 + 6 x 4 x 16 x 8 (3072) + 2 x 96 x 4 (768).
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 4096, true), 20992.0 + 3072 + 768);
}

TEST(LayerKindsTest, MambaV1) {
  ModelSpec m = Small(Of(Mixer::kMamba, FfnKind::kDense));
  m.mamba_version = 1;
  m.mamba_heads = 128;  // inner = expand 2 x hidden 64
  m.mamba_head_dim = 1;
  m.mamba_state = 16;
  m.mamba_dt_rank = 4;
  m.mamba_conv_kernel = 4;
  m.mamba_conv_bias = true;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  const LayerSpec& l = m.layers[0];
  // in_proj 64 x 256 = 16384, out_proj 128 x 64 = 8192, x_proj 128 x (4 + 32) = 4608, dt_proj
  // 4 x 128 = 512 -> 29696. conv 128 x 4 + 128 = 640, dt bias 128, A_log 128 x 16 = 2048, D 128,
  // dt / B / C norms 4 + 16 + 16 = 36 -> 2980. Total 32676.
  EXPECT_EQ(MixerParams(m, l), 32676);
  // State 128 x 16 x 1 = 2048 + 128 x 3 = 384 -> 2432 x 2 B = 4864 B.
  EXPECT_EQ(StateBytesOfLayer(m, l), 4864.0);
}

ModelSpec SparseMla() {
  ModelSpec m = Small(Of(Mixer::kSparse, FfnKind::kDense));
  m.attention = AttentionKind::kMla;
  m.num_kv_heads = 4;
  m.head_dim = 12;
  m.q_lora_rank = 32;
  m.kv_lora_rank = 16;
  m.qk_nope_head_dim = 8;
  m.qk_rope_head_dim = 4;
  m.v_head_dim = 8;
  m.index_topk = 10;
  m.index_heads = 2;
  m.index_head_dim = 8;
  return m;
}

TEST(LayerKindsTest, SparseAttentionWithIndexer) {
  ModelSpec m = SparseMla();
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  const LayerSpec& l = m.layers[0];
  // KV: latent 16 + rope 4 + the indexer's key 8 = 28 elements x 2 B = 56 B per token.
  EXPECT_EQ(KvBytesPerTokenOfLayer(m, l, DType::kBF16), 56.0);
  // The cache holds every token (top-k only limits what is read): 1000 tokens x 56 B.
  EXPECT_EQ(KvBytesForSequence(m, DType::kBF16, 1000), 56000.0);
  // Indexer: wq_b 32 x 2 x 8 = 512, wk 64 x 8 = 512, weights_proj 64 x 2 = 128; k_norm 2 x 8.
  ModelSpec dense_attn = m;
  dense_attn.layers[0].mixer = Mixer::kAttention;
  EXPECT_EQ(MixerParams(m, l) - MixerParams(dense_attn, dense_attn.layers[0]), 1152 + 16);
  const double w = 2.0 * (static_cast<double>(MixerParams(m, l)) - 16 + 3 * 64 * 128);
  // Decode at 100: MLA absorbed 2 x 4 x (2 x 16 + 4) = 288 per key over min(100, 10) keys = 2880;
  // indexer 2 x 2 x 8 = 32 per key over all 100 keys = 3200.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 100, true), w + 2880 + 3200);
  // Decode at 5 (fewer keys than top-k): 288 x 5 + 32 x 5.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 5, true), w + 1440 + 160);
  // Prefill of 100: MLA 2 x 4 x (8 + 4 + 8) = 160 per key over mean min(i, 10) keys =
  // (10 x 11 / 2 + 90 x 10) / 100 = 9.55 -> 1528; indexer 32 x 101 / 2 = 1616.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, l, 100, false), w + 1528 + 1616);
  // A layer reusing an earlier indexer: no indexer weights, cache or scoring.
  m.layers[0].shared_indexer = true;
  EXPECT_EQ(KvBytesPerTokenOfLayer(m, m.layers[0], DType::kBF16), 40.0);
  EXPECT_EQ(MixerParams(m, m.layers[0]), MixerParams(dense_attn, dense_attn.layers[0]));
}

TEST(LayerKindsTest, NoMixerBlockAndNonGatedMlp) {
  // Nemotron-H MLP block: no mixer, relu2 MLP 64 -> 128 -> 64 = 16384, one norm of 64.
  ModelSpec m = Small(Of(Mixer::kNone, FfnKind::kDense));
  m.gated_ffn = false;
  ASSERT_TRUE(ValidateModelSpec(m).ok());
  EXPECT_EQ(LayerParams(m, m.layers[0]), 16384 + 64);
  EXPECT_EQ(KvBytesPerToken(m, DType::kBF16), 0.0);
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, m.layers[0], 4096, true), 2.0 * 16384);
}

TEST(LayerKindsTest, ZeroComputationExperts) {
  // 8 real + 4 identity experts, top-3: 3 x 8 / 12 = 2 real experts per token on average.
  ModelSpec m = Small(Of(Mixer::kAttention, FfnKind::kMoe));
  m.num_experts = 8;
  m.num_zero_experts = 4;
  m.experts_per_token = 3;
  m.expert_ffn_size = 32;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  const ParamCounts c = CountParams(m);
  const int64_t expert = 3 * 64 * 32;  // 6144
  EXPECT_EQ(c.routed_experts, 8 * expert);
  EXPECT_EQ(c.routers, 64 * 12);  // the router scores all 12
  EXPECT_EQ(c.active, c.total - 8 * expert + 2 * expert);
}

TEST(LayerKindsTest, LatentMoe) {
  // Experts in a 16-wide latent: non-gated 16 -> 32 -> 16 = 1024 each; router 64 x 4 = 256;
  // fc1 / fc2 latent projections 2 x 64 x 16 = 2048; shared expert on hidden 2 x 64 x 32 = 4096.
  ModelSpec m = Small(Of(Mixer::kNone, FfnKind::kMoe));
  m.gated_ffn = false;
  m.num_experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_size = 32;
  m.moe_latent_size = 16;
  m.num_shared_experts = 1;
  m.shared_ffn_size = 32;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  EXPECT_EQ(FfnParamsOfLayer(m, m.layers[0]), 4 * 1024 + 256 + 2048 + 4096);
  // FLOPs: 2 x (256 + 4096 + 2048 + 2 x 1024).
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(m, m.layers[0], 10, true), 2.0 * (256 + 4096 + 2048 + 2048));
}

TEST(LayerKindsTest, PerLayerShapes) {
  // Gemma 4 global layer: head_dim 32, 1 KV head, K = V (no v_proj), gated q stays off.
  ModelSpec m = Small(Of(Mixer::kAttention, FfnKind::kDense));
  m.layers[0].head_dim = 32;
  m.layers[0].kv_heads = 1;
  m.layers[0].k_eq_v = true;
  ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
  // q 64 x 4 x 32 = 8192, k 64 x 1 x 32 = 2048, o 4 x 32 x 64 = 8192.
  EXPECT_EQ(MixerParams(m, m.layers[0]), 18432);
  // K and V are both cached: 2 x 1 x 32 x 2 B.
  EXPECT_EQ(KvBytesPerTokenOfLayer(m, m.layers[0], DType::kBF16), 128.0);
  // DeciLM FFN width of its own.
  m.layers[0].ffn_size = 256;
  EXPECT_EQ(FfnParamsOfLayer(m, m.layers[0]), 3 * 64 * 256);
}

TEST(LayerKindsTest, ValidationNamesTheField) {
  ModelSpec m = Small(Of(Mixer::kLinear, FfnKind::kDense));
  Status s = ValidateModelSpec(m);  // linear fields missing
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("linear_key_heads"), std::string::npos) << s.message();
  m = Small(Of(Mixer::kMamba, FfnKind::kDense));
  m.layers[0].window = 16;
  s = ValidateModelSpec(m);
  ASSERT_FALSE(s.ok());
  m = SparseMla();
  m.index_topk = 0;
  s = ValidateModelSpec(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("index_topk"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace l2s
