// DeepSeek-V4 (model_type deepseek_v4): the importer's fields, one-line errors for missing or
// malformed keys, parameter counts, KV bytes and keys attended per layer kind, all against
// figures derived by hand from the shapes of inference/model.py for one small config, and the
// deepseek-v4-flash preset against a transcription of the released config.json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "model/counts.h"
#include "model/hf_config.h"
#include "model/presets.h"

namespace l2s {
namespace {

using nlohmann::json;

// h 64, 4 heads of 32 (rope 8), q_lora 16, o_lora 8 in 2 groups, window 8, layers of ratio
// 0 / 4 / 128 / 4 (the fifth entry belongs to the MTP layer), indexer 2 x 16 picking 4,
// hc 2, 8 experts top-2 of 32 + 1 shared, the first layer hash-routed, one MTP layer.
json Small() {
  return json{{"model_type", "deepseek_v4"},
              {"hidden_size", 64},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 1},
              {"head_dim", 32},
              {"qk_rope_head_dim", 8},
              {"q_lora_rank", 16},
              {"o_lora_rank", 8},
              {"o_groups", 2},
              {"sliding_window", 8},
              {"compress_ratios", {0, 4, 128, 4, 0}},
              {"index_topk", 4},
              {"index_n_heads", 2},
              {"index_head_dim", 16},
              {"hc_mult", 2},
              {"hc_sinkhorn_iters", 20},
              {"n_routed_experts", 8},
              {"num_experts_per_tok", 2},
              {"n_shared_experts", 1},
              {"moe_intermediate_size", 32},
              {"num_hash_layers", 1},
              {"num_nextn_predict_layers", 1},
              {"vocab_size", 100},
              {"max_position_embeddings", 4096},
              {"tie_word_embeddings", false}};
}

StatusOr<ModelSpec> Parse(const json& j) { return ParseHfConfig(j.dump(), "config.json"); }

TEST(DeepseekV4Test, ReadsEveryField) {
  StatusOr<ModelSpec> m = Parse(Small());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->architecture, "deepseek_v4");
  EXPECT_EQ(m->attention, AttentionKind::kMla);
  EXPECT_EQ(m->head_dim, 32);
  EXPECT_EQ(m->kv_lora_rank, 24);  // head_dim - rope: the shared KV vector as an MLA latent
  EXPECT_EQ(m->qk_rope_head_dim, 8);
  EXPECT_EQ(m->v_head_dim, 32);
  EXPECT_EQ(m->q_lora_rank, 16);
  EXPECT_EQ(m->o_lora_rank, 8);
  EXPECT_EQ(m->o_groups, 2);
  EXPECT_EQ(m->hc_mult, 2);
  EXPECT_EQ(m->num_hash_layers, 1);
  EXPECT_EQ(m->mtp_layers, 1);
  EXPECT_EQ(m->index_topk, 4);
  EXPECT_EQ(m->index_heads, 2);
  EXPECT_EQ(m->index_head_dim, 16);
  EXPECT_EQ(m->num_experts, 8);
  EXPECT_EQ(m->experts_per_token, 2);
  EXPECT_EQ(m->num_shared_experts, 1);
  EXPECT_EQ(m->shared_ffn_size, 32);
  EXPECT_TRUE(m->attention_sinks);
  ASSERT_EQ(m->layers.size(), 4u);
  const int ratios[] = {0, 4, 128, 4};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m->layers[i].compress_ratio, ratios[i]) << i;
    EXPECT_EQ(m->layers[i].window, 8) << i;
    EXPECT_EQ(m->layers[i].ffn, FfnKind::kMoe) << i;
    EXPECT_EQ(m->layers[i].mixer, ratios[i] == 4 ? Mixer::kSparse : Mixer::kAttention) << i;
  }
}

void ExpectError(const json& j, const std::string& needle) {
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_FALSE(m.ok()) << "accepted";
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("config.json: field \"" + needle + "\""), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(DeepseekV4Test, MissingOrMalformedKeysNameTheField) {
  for (const char* key : {"head_dim", "qk_rope_head_dim", "q_lora_rank", "o_lora_rank",
                          "o_groups", "sliding_window", "hc_mult", "compress_ratios",
                          "index_topk", "index_n_heads", "index_head_dim", "n_routed_experts",
                          "num_experts_per_tok", "n_shared_experts", "moe_intermediate_size"}) {
    SCOPED_TRACE(key);
    json j = Small();
    j.erase(key);
    ExpectError(j, key);
  }
  json j = Small();
  j["num_key_value_heads"] = 2;
  ExpectError(j, "num_key_value_heads");
  j = Small();
  j["compress_ratios"] = {0, 4, 128};
  ExpectError(j, "compress_ratios");
  j = Small();
  j["compress_ratios"] = {0, 4, -1, 4};
  ExpectError(j, "compress_ratios");
  j = Small();
  j["o_groups"] = 3;  // does not divide 4 heads
  ExpectError(j, "o_groups");
  // Without ratio-4 layers the indexer fields are not needed.
  j = Small();
  j["compress_ratios"] = {0, 128, 128, 0};
  for (const char* key : {"index_topk", "index_n_heads", "index_head_dim"}) j.erase(key);
  EXPECT_TRUE(Parse(j).ok());
}

// Hand count (inference/model.py shapes; h 64, H 4, hd 32, q_lora 16, o_lora 8, G 2):
//   attention of every layer: wq_a 1024 + wq_b 2048 + wkv 2048 + wo_a 1024 + wo_b 1024 = 7168,
//     attn_sink 4, norms attn/ffn 128 + q_norm 16 + kv_norm 32, hyper-connections
//     2 x (8 x 128 + 8 + 3) = 2070 (mix (2 + 2) x 2 = 8)
//   ratio 4: compressor wkv + wgate 2 x 64 x 64 = 8192, ape 4 x 64 = 256, norm 32; indexer
//     wq_b 16 x 32 = 512, weights_proj 128, its compressor 2 x 64 x 32 = 4096, ape 128, norm 16
//   ratio 128: compressor 2 x 64 x 32 = 4096, ape 128 x 32 = 4096, norm 32
//   layers: 0 -> 7172 + 2246, 1 and 3 -> 20484 + 2294, 2 -> 15364 + 2278
//   MoE per layer: experts 8 x 6144 = 49152, shared 6144, gate 512 + bias 8; layer 0 hash-routed:
//     tid2eid 100 x 2 = 200 instead of the bias (+192)
//   embedding 6400, head 6400, final norm 64 + HC head 2 x 2 x 64 + 2 + 1 = 323
// total 309195; active = total - 4 x 49152 + 4 x 2 x 6144 = 161739;
// MTP: layer-0 shape (ratio 0, gate with bias) 7172 + 2246 + 55816, e_proj + h_proj 8192,
// enorm/hnorm/norm 192, HC head 259 = 73877 (embedding and head shared with the main model).
TEST(DeepseekV4Test, ParameterCountsByHand) {
  StatusOr<ModelSpec> m = Parse(Small());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ParamCounts c = CountParams(*m);
  EXPECT_EQ(MixerParams(*m, m->layers[0]), 7172);
  EXPECT_EQ(MixerParams(*m, m->layers[1]), 20484);
  EXPECT_EQ(MixerParams(*m, m->layers[2]), 15364);
  EXPECT_EQ(NormParamsOfLayer(*m, m->layers[0]), 2246);
  EXPECT_EQ(NormParamsOfLayer(*m, m->layers[1]), 2294);
  EXPECT_EQ(NormParamsOfLayer(*m, m->layers[2]), 2278);
  EXPECT_EQ(c.attention, 63504);
  EXPECT_EQ(c.routed_experts, 4 * 49152);
  EXPECT_EQ(c.shared_experts, 4 * 6144);
  EXPECT_EQ(c.routers, 4 * 520 + 192);
  EXPECT_EQ(c.total, 309195);
  EXPECT_EQ(c.active, 161739);
  EXPECT_EQ(c.mtp, 73877);
}

// KV at context 300, bf16: ratio 0 holds its 8 window tokens x 32 = 256 elements (512 B);
// ratio 4: 256 + 75 entries x (32 + 16) = 3856 elements (7712 B); ratio 128: 256 + 2 x 32 = 320
// (640 B). Per token for an unbounded context: 32 x 2 = 64 B, 48 / 4 x 2 = 24 B, 32 / 128 x 2.
TEST(DeepseekV4Test, KvBytesPerLayerKind) {
  StatusOr<ModelSpec> m = Parse(Small());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& L = m->layers;
  EXPECT_DOUBLE_EQ(KvBytesOfLayerForSequence(*m, L[0], DType::kBF16, 300), 512.0);
  EXPECT_DOUBLE_EQ(KvBytesOfLayerForSequence(*m, L[1], DType::kBF16, 300), 7712.0);
  EXPECT_DOUBLE_EQ(KvBytesOfLayerForSequence(*m, L[2], DType::kBF16, 300), 640.0);
  EXPECT_DOUBLE_EQ(KvBytesForSequence(*m, DType::kBF16, 300), 512.0 + 2 * 7712.0 + 640.0);
  EXPECT_DOUBLE_EQ(KvBytesPerTokenOfLayer(*m, L[0], DType::kBF16), 64.0);
  EXPECT_DOUBLE_EQ(KvBytesPerTokenOfLayer(*m, L[1], DType::kBF16), 24.0);
  EXPECT_DOUBLE_EQ(KvBytesPerTokenOfLayer(*m, L[2], DType::kBF16), 0.5);
  // Short context: 5 tokens, window not full, one ratio-4 entry, no ratio-128 entry.
  EXPECT_DOUBLE_EQ(KvBytesOfLayerForSequence(*m, L[1], DType::kBF16, 5), (5 * 32 + 48) * 2.0);
  EXPECT_DOUBLE_EQ(KvBytesOfLayerForSequence(*m, L[2], DType::kBF16, 5), 5 * 32 * 2.0);
}

// Decode at context 300: window 8 keys; ratio 4 adds min(75, top-4) = 4; ratio 128 adds 2.
// Prefill of 300 (mean over positions i of min(i, 8) + compressed entries floor(i / r)):
// window (36 + 292 x 8) / 300 = 2372 / 300; ratio 4 capped at 4: entries 1..4 for i in 4..19
// (4 + 8 + 12 + 16 = 40) and 4 for i in 20..300 (1124): 1164 / 300; ratio 128: 128 x 1 + 45 x 2
// = 218 / 300. FLOPs per key 4 x 4 heads x 32 = 512; the ratio-4 indexer scores the 75 entries
// at 2 x 2 x 16 each (4800).
TEST(DeepseekV4Test, KeysAttendedAndFlopsPerLayerKind) {
  StatusOr<ModelSpec> m = Parse(Small());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& L = m->layers;
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[0], 300, true), 8.0);
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[1], 300, true), 12.0);
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[2], 300, true), 10.0);
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[0], 300, false), 2372.0 / 300);
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[1], 300, false), (2372.0 + 1164.0) / 300);
  EXPECT_DOUBLE_EQ(AttendedKeys(*m, L[2], 300, false), (2372.0 + 218.0) / 300);
  // Layer 1 decode: 2 x (mixer matrices 20096 + router 512 + shared 6144 + 2 experts x 6144)
  // + 512 x 12 keys + 4800.
  EXPECT_DOUBLE_EQ(LayerFlopsPerToken(*m, L[1], 300, true), 2.0 * 39040 + 512 * 12 + 4800);
}

// The released DeepSeek-V4-Flash config.json (deepseek-ai/DeepSeek-V4-Flash), transcribed.
json FlashConfig() {
  json ratios = json::array({0, 0});
  for (int i = 0; i < 20; ++i) {
    ratios.push_back(4);
    ratios.push_back(128);
  }
  ratios.push_back(4);
  ratios.push_back(0);
  return json{{"architectures", {"DeepseekV4ForCausalLM"}},
              {"attention_bias", false},
              {"attention_dropout", 0.0},
              {"bos_token_id", 0},
              {"eos_token_id", 1},
              {"expert_dtype", "fp4"},
              {"hc_eps", 1e-6},
              {"hc_mult", 4},
              {"hc_sinkhorn_iters", 20},
              {"head_dim", 512},
              {"hidden_act", "silu"},
              {"hidden_size", 4096},
              {"index_head_dim", 128},
              {"index_n_heads", 64},
              {"index_topk", 512},
              {"initializer_range", 0.02},
              {"max_position_embeddings", 1048576},
              {"model_type", "deepseek_v4"},
              {"moe_intermediate_size", 2048},
              {"n_routed_experts", 256},
              {"n_shared_experts", 1},
              {"norm_topk_prob", true},
              {"num_attention_heads", 64},
              {"num_experts_per_tok", 6},
              {"num_hidden_layers", 43},
              {"num_hash_layers", 3},
              {"num_key_value_heads", 1},
              {"num_nextn_predict_layers", 1},
              {"o_groups", 8},
              {"o_lora_rank", 1024},
              {"q_lora_rank", 1024},
              {"qk_rope_head_dim", 64},
              {"quantization_config",
               {{"activation_scheme", "dynamic"},
                {"fmt", "e4m3"},
                {"quant_method", "fp8"},
                {"scale_fmt", "ue8m0"},
                {"weight_block_size", {128, 128}}}},
              {"rms_norm_eps", 1e-6},
              {"rope_scaling",
               {{"beta_fast", 32},
                {"beta_slow", 1},
                {"factor", 16},
                {"original_max_position_embeddings", 65536},
                {"type", "yarn"}}},
              {"rope_theta", 10000},
              {"routed_scaling_factor", 1.5},
              {"scoring_func", "sqrtsoftplus"},
              {"sliding_window", 128},
              {"swiglu_limit", 10.0},
              {"tie_word_embeddings", false},
              {"topk_method", "noaux_tc"},
              {"torch_dtype", "bfloat16"},
              {"use_cache", true},
              {"vocab_size", 129280},
              {"compress_rope_theta", 160000},
              {"compress_ratios", ratios}};
}

TEST(DeepseekV4Test, FlashPresetEqualsItsConfig) {
  StatusOr<ModelSpec> parsed = ParseHfConfig(FlashConfig().dump(), "deepseek-v4-flash");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  StatusOr<ModelSpec> preset = ModelPreset("deepseek-v4-flash");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(*parsed == *preset);
  // Model card: 284B total, 13B activated (our active includes the 0.53B embedding table).
  const ParamCounts c = CountParams(*preset);
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 284.3, 0.05);
  EXPECT_NEAR(static_cast<double>(c.active - c.embedding) / 1e9, 13.3, 0.05);
  EXPECT_EQ(preset->num_mixer_layers(Mixer::kSparse), 21);
}

}  // namespace
}  // namespace l2s
