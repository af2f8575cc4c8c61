// Parameter counts, KV bytes and FLOPs: published totals, hand-derived figures, and invariants
// over random valid ModelSpecs.
#include "model/counts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/presets.h"

namespace l2s {
namespace {

ModelSpec Preset(const char* name) {
  StatusOr<ModelSpec> m = ModelPreset(name);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : ModelSpec{};
}

struct Published {
  const char* preset;
  double total;   // parameters
  double active;  // 0 = dense (active must equal total)
  const char* source;
};

// Totals within 2%, active within 10% (publishers round to 2-3 digits and differ slightly in what
// they count as active; see counts.h).
const Published kPublished[] = {
    {"llama-3.1-8b", 8.03e9, 0, "HF model card / safetensors metadata: 8,030,261,248"},
    {"llama-3.1-70b", 70.6e9, 0, "HF safetensors metadata: 70,553,706,496"},
    {"llama-3.1-405b", 405.9e9, 0, "HF safetensors metadata: 405,853,388,800"},
    {"mixtral-8x7b", 46.7e9, 12.9e9, "Mistral AI, 'Mixtral of experts' (Dec 2023)"},
    {"mixtral-8x22b", 141e9, 39e9, "Mistral AI, 'Cheaper, Better, Faster, Stronger' (Apr 2024)"},
    {"qwen3-32b", 32.8e9, 0, "Qwen3-32B model card"},
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, "Qwen3-30B-A3B model card"},
    {"qwen3-235b-a22b", 235e9, 22e9, "Qwen3-235B-A22B model card"},
    {"deepseek-v3", 671e9, 37e9, "DeepSeek-V3 technical report (main model, MTP excluded)"},
    {"kimi-k2", 1.03e12, 32e9, "Kimi-K2-Instruct model card (1T total, 32B activated)"},
    {"llama-4-maverick", 400e9, 17e9, "Meta, 'The Llama 4 herd' (Apr 2025)"},
};

TEST(CountsTest, PublishedTotals) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(p.preset);
    const ParamCounts c = CountParams(Preset(p.preset));
    EXPECT_NEAR(static_cast<double>(c.total), p.total, 0.02 * p.total) << p.source;
    if (p.active == 0) {
      EXPECT_EQ(c.active, c.total);
    } else {
      EXPECT_NEAR(static_cast<double>(c.active), p.active, 0.10 * p.active) << p.source;
    }
  }
}

TEST(CountsTest, GptOssMatchesModelCard) {
  // OpenAI gpt-oss model card, table 1: 116.83B total, 5.13B active. The card counts the
  // unembedding but not the embedding table as active, so compare active - embedding.
  const ParamCounts c = CountParams(Preset("gpt-oss-120b"));
  EXPECT_NEAR(static_cast<double>(c.total), 116.83e9, 0.02 * 116.83e9);
  EXPECT_NEAR(static_cast<double>(c.active - c.embedding), 5.13e9, 0.10 * 5.13e9);
  // Checkpoint size 60.8 GiB (card): MXFP4 experts (4.25 bits) + bf16 everything else.
  const double gib = WeightBytes(Preset("gpt-oss-120b"), DType::kFP4) / kGiB;
  EXPECT_NEAR(gib, 60.8, 0.03 * 60.8);
}

TEST(CountsTest, Llama8BExact) {
  // Per layer: q 4096*4096 + k,v 2*4096*(8*128) + o 4096*4096 = 41,943,040;
  // FFN 3*4096*14336 = 176,160,768; norms 2*4096 = 8,192 -> 218,112,000; x32 = 6,979,584,000.
  // Embedding and lm_head 2*128256*4096 = 1,050,673,152; final norm 4,096.
  // Total 8,030,261,248 (the safetensors total of Meta-Llama-3.1-8B).
  const ParamCounts c = CountParams(Preset("llama-3.1-8b"));
  EXPECT_EQ(c.total, 8'030'261'248);
  EXPECT_EQ(c.attention, 32 * 41'943'040LL);
  EXPECT_EQ(c.dense_ffn, 32 * 176'160'768LL);
  EXPECT_EQ(c.embedding, 525'336'576);
  EXPECT_EQ(c.lm_head, 525'336'576);
  EXPECT_EQ(c.norms, 32 * 8'192 + 4'096);
  EXPECT_EQ(c.mtp, 0);
}

TEST(CountsTest, DeepseekMtpReportedApart) {
  // DeepSeek-V3 card: 685B on HF = 671B main + 14B MTP module.
  const ParamCounts c = CountParams(Preset("deepseek-v3"));
  EXPECT_GT(c.mtp, 13.0e9);
  EXPECT_LT(c.mtp, 14.5e9);
  EXPECT_NEAR(static_cast<double>(c.total + c.mtp), 685e9, 0.02 * 685e9);
  EXPECT_EQ(CountParams(Preset("kimi-k2")).mtp, 0);  // num_nextn_predict_layers 0
}

TEST(CountsTest, SyntheticGptMoeNearNominal) {
  // Per layer: attention 4*12288^2 (+biases); 16 experts of 2*12288*49152 (+biases) = 19.33B;
  // ~19.93B per layer. 60 layers + 2*51200*12288 embeddings = 1.197T; 80 layers = 1.596T.
  const ParamCounts c12 = CountParams(Preset("gpt-moe-1.2t"));
  const ParamCounts c16 = CountParams(Preset("gpt-moe-1.6t"));
  EXPECT_NEAR(static_cast<double>(c12.total), 1.2e12, 0.02 * 1.2e12);
  EXPECT_NEAR(static_cast<double>(c16.total), 1.6e12, 0.02 * 1.6e12);
  // Top-2 of 16: active = total - 14/16 of the experts.
  EXPECT_EQ(c12.active, c12.total - c12.routed_experts / 16 * 14);
  EXPECT_TRUE(Preset("gpt-moe-1.2t").synthetic);
}

TEST(CountsTest, KvBytesHandDerived) {
  // Llama-3.1-70B, GQA: 80 layers x 2 (K and V) x 8 kv heads x 128 head_dim x 2 bytes (bf16)
  // = 80 x 4,096 = 327,680 bytes per token.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Preset("llama-3.1-70b"), DType::kBF16), 327'680.0);
  // fp8 KV halves it.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Preset("llama-3.1-70b"), DType::kFP8), 163'840.0);
  // DeepSeek-V3, MLA latent cache: 61 layers x (kv_lora_rank 512 + qk_rope 64) x 2 bytes
  // = 61 x 1,152 = 70,272 bytes per token.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Preset("deepseek-v3"), DType::kBF16), 70'272.0);
  // Synthetic GPT-MoE 1.2T, MHA: 60 x 2 x 96 x 128 x 2 = 2,949,120.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Preset("gpt-moe-1.2t"), DType::kBF16), 2'949'120.0);
}

TEST(CountsTest, SlidingWindowLayersCappedAtWindow) {
  // gpt-oss-120b: 36 layers, 18 sliding (window 128) and 18 full; per layer per token
  // 2 x 8 x 64 x 2 = 2,048 bytes.
  const ModelSpec m = Preset("gpt-oss-120b");
  EXPECT_DOUBLE_EQ(KvBytesPerTokenPerLayer(m, DType::kBF16), 2'048.0);
  // 4096 tokens: 18 x 4096 + 18 x 128 = 76,032 layer-tokens x 2,048 B = 155,713,536 B.
  EXPECT_DOUBLE_EQ(KvBytesForSequence(m, DType::kBF16, 4096), 155'713'536.0);
  // Shorter than the window: every layer holds all 100 tokens.
  EXPECT_DOUBLE_EQ(KvBytesForSequence(m, DType::kBF16, 100), 36.0 * 100 * 2'048);
  // Unbounded per-token figure counts window layers as full.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, DType::kBF16), 36.0 * 2'048);
  EXPECT_EQ(KvBytesForSequence(m, DType::kBF16, 0), 0.0);
}

TEST(CountsTest, DecodeFlopsHandDerived) {
  // Llama-3.1-8B at context 4096. Weight matmuls: 32 x (41,943,040 + 176,160,768) + lm_head
  // 525,336,576 = 7,504,658,432 multiply-adds -> 15,009,316,864 FLOPs. Attention: QK^T and PV,
  // 2 FLOPs each per head dim: 4 x 32 heads x 128 x 4096 keys x 32 layers = 2,147,483,648.
  EXPECT_DOUBLE_EQ(FlopsPerTokenDecode(Preset("llama-3.1-8b"), 4096), 17'156'800'512.0);
  // DeepSeek-V3 absorbed MLA decode: per key 2 x 128 heads x (2 x 512 + 64) = 278,528 FLOPs per
  // layer; the weight term does not depend on context.
  const ModelSpec ds = Preset("deepseek-v3");
  EXPECT_DOUBLE_EQ(FlopsPerTokenDecode(ds, 2000) - FlopsPerTokenDecode(ds, 1000),
                   278'528.0 * 61 * 1000);
}

TEST(CountsTest, PrefillIsMeanOfDecodeForGqa) {
  // Slow reference: prefill of L tokens = mean over positions i of decode at context i (GQA,
  // where prefill and decode attention cost the same per key), with and without windows.
  for (const char* name : {"llama-3.1-8b", "gpt-oss-120b", "mixtral-8x7b"}) {
    SCOPED_TRACE(name);
    const ModelSpec m = Preset(name);
    for (int64_t len : {1, 7, 128, 129, 300}) {
      double sum = 0;
      for (int64_t i = 1; i <= len; ++i) sum += FlopsPerTokenDecode(m, i);
      const double ref = sum / static_cast<double>(len);
      EXPECT_NEAR(FlopsPerTokenPrefill(m, len), ref, 1e-9 * ref) << "len " << len;
    }
  }
}

// A random ModelSpec that passes ValidateModelSpec.
ModelSpec RandomSpec(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ModelSpec m;
  m.name = "random";
  m.architecture = "random";
  m.num_layers = static_cast<int>(pick(1, 12));
  m.hidden_size = 64 * pick(1, 32);
  m.vocab_size = pick(1, 50000);
  m.tied_embeddings = pick(0, 1);
  m.num_kv_heads = static_cast<int>(pick(1, 8));
  m.num_heads = m.num_kv_heads * static_cast<int>(pick(1, 8));
  m.head_dim = static_cast<int>(pick(1, 256));
  m.attention_bias = pick(0, 1);
  m.qkv_bias = pick(0, 1);
  m.attention_sinks = pick(0, 1);
  m.qk_norm = pick(0, 1);
  m.layernorm_bias = pick(0, 1);
  m.gated_ffn = pick(0, 1);
  if (pick(0, 2) == 0) {
    m.attention = AttentionKind::kMla;
    m.num_kv_heads = m.num_heads;
    m.q_lora_rank = static_cast<int>(pick(0, 512));
    m.kv_lora_rank = static_cast<int>(pick(1, 512));
    m.qk_nope_head_dim = static_cast<int>(pick(0, 128));
    m.qk_rope_head_dim = static_cast<int>(pick(1, 64));
    m.v_head_dim = static_cast<int>(pick(1, 128));
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  }
  m.dense_ffn_size = pick(1, 4096);
  m.dense_ffn_bias = pick(0, 1);
  if (pick(0, 1)) {
    m.num_experts = static_cast<int>(pick(1, 64));
    m.experts_per_token = static_cast<int>(pick(1, m.num_experts));
    m.expert_ffn_size = pick(1, 2048);
    m.expert_bias = pick(0, 1);
    m.router_bias = pick(0, 1);
    m.num_shared_experts = static_cast<int>(pick(0, 2));
    m.shared_ffn_size = m.num_shared_experts > 0 ? pick(1, 2048) : 0;
    m.mtp_layers = static_cast<int>(pick(0, 2));
  }
  m.layers.resize(m.num_layers);
  for (LayerSpec& l : m.layers) {
    l.ffn = m.is_moe() && pick(0, 3) > 0 ? FfnKind::kMoe : FfnKind::kDense;
    l.window = pick(0, 1) ? static_cast<int>(pick(1, 512)) : 0;
  }
  return m;
}

TEST(CountsTest, InvariantsOverRandomSpecs) {
  std::mt19937_64 rng(20261129);
  for (int iter = 0; iter < 500; ++iter) {
    const ModelSpec m = RandomSpec(rng);
    ASSERT_TRUE(ValidateModelSpec(m).ok()) << ValidateModelSpec(m).ToString();
    const ParamCounts c = CountParams(m);
    // Parts add up; active between the non-expert part and the total.
    EXPECT_EQ(c.total, c.embedding + c.lm_head + c.attention + c.dense_ffn + c.routed_experts +
                           c.shared_experts + c.routers + c.norms);
    EXPECT_EQ(c.total - c.routed_experts + m.num_moe_layers() * int64_t{m.experts_per_token} *
                                               ExpertParams(m),
              c.active);
    EXPECT_LE(c.active, c.total);
    EXPECT_GE(c.active, c.total - c.routed_experts);
    if (m.experts_per_token == m.num_experts) {
      EXPECT_EQ(c.active, c.total);
    }
    EXPECT_EQ(c.attention, m.num_layers * AttentionParamsPerLayer(m));
    // Per-layer reference: sum of layer-by-layer parameters.
    int64_t by_layer = 0;
    for (const LayerSpec& l : m.layers) {
      by_layer += AttentionParamsPerLayer(m) + NormParamsPerLayer(m);
      by_layer += l.ffn == FfnKind::kMoe ? m.num_experts * ExpertParams(m) : 0;
    }
    const int64_t final_norm = m.hidden_size * (m.layernorm_bias ? 2 : 1);
    EXPECT_EQ(by_layer, c.attention + c.routed_experts + c.norms - final_norm);
    // Bytes: bf16 is exactly 2 bytes per parameter; narrower formats never weigh more.
    EXPECT_DOUBLE_EQ(WeightBytes(m, DType::kBF16), 2.0 * static_cast<double>(c.total));
    EXPECT_LE(WeightBytes(m, DType::kFP8), WeightBytes(m, DType::kBF16));
    EXPECT_LE(WeightBytes(m, DType::kFP4), WeightBytes(m, DType::kFP8));
    // KV: windows only reduce the cache; the sequence figure grows with context and never
    // exceeds the unbounded per-token figure times the context.
    const double per_token = KvBytesPerToken(m, DType::kBF16);
    double prev = 0;
    for (int64_t ctx : {1, 100, 511, 513, 5000}) {
      const double kv = KvBytesForSequence(m, DType::kBF16, ctx);
      EXPECT_LE(kv, per_token * static_cast<double>(ctx) * (1 + 1e-12));
      EXPECT_GE(kv, prev);
      prev = kv;
    }
    // FLOPs grow with context and are at least twice the matmul weights touched.
    EXPECT_LE(FlopsPerTokenDecode(m, 10), FlopsPerTokenDecode(m, 1000));
    EXPECT_GT(FlopsPerTokenPrefill(m, 10), 0.0);
    EXPECT_GE(c.mtp, 0);
    if (m.mtp_layers == 0) {
      EXPECT_EQ(c.mtp, 0);
    }
  }
}

}  // namespace
}  // namespace l2s
