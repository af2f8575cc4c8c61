// ParseHfConfig for the hybrid / sparse / heterogeneous families (issue 13): small inline configs
// of each family, the per-layer kinds they produce, NaN / Infinity tokens, and malformed configs
// (missing pattern fields, pattern length != layer count, negative window) rejected with one line
// naming the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "model/counts.h"
#include "model/hf_config.h"

namespace l2s {
namespace {

using nlohmann::json;

StatusOr<ModelSpec> Parse(const json& j) { return ParseHfConfig(j.dump(), "config.json"); }

void ExpectError(const StatusOr<ModelSpec>& r, const std::string& field) {
  ASSERT_FALSE(r.ok()) << "accepted";
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find(field), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

json Base(const char* type) {
  return json{{"model_type", type},       {"num_hidden_layers", 4}, {"hidden_size", 256},
              {"intermediate_size", 512}, {"num_attention_heads", 8}, {"num_key_value_heads", 2},
              {"vocab_size", 1000}};
}

json Qwen3Next() {
  json j = Base("qwen3_next");
  j.update({{"head_dim", 64},
            {"full_attention_interval", 4},
            {"linear_num_key_heads", 2},
            {"linear_num_value_heads", 4},
            {"linear_key_head_dim", 32},
            {"linear_value_head_dim", 16},
            {"linear_conv_kernel_dim", 4},
            {"num_experts", 8},
            {"num_experts_per_tok", 2},
            {"moe_intermediate_size", 64},
            {"shared_expert_intermediate_size", 64}});
  return j;
}

TEST(HfFamiliesTest, Qwen3NextHybridLayers) {
  StatusOr<ModelSpec> m = Parse(Qwen3Next());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // full_attention_interval 4: layer 3 full, 0-2 gated DeltaNet.
  EXPECT_EQ(m->layers[0].mixer, Mixer::kLinear);
  EXPECT_EQ(m->layers[2].mixer, Mixer::kLinear);
  EXPECT_EQ(m->layers[3].mixer, Mixer::kAttention);
  EXPECT_TRUE(m->gated_attention);
  EXPECT_EQ(m->num_moe_layers(), 4);
  EXPECT_EQ(m->num_shared_experts, 1);
  EXPECT_EQ(m->linear_value_heads, 4);

  json j = Qwen3Next();
  j["layer_types"] = {"linear_attention", "full_attention", "linear_attention", "full_attention"};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[1].mixer, Mixer::kAttention);

  j["layer_types"] = {"linear_attention", "full_attention"};  // 2 entries for 4 layers
  ExpectError(Parse(j), "\"layer_types\"");
  j["layer_types"] = {"linear_attention", "full_attention", "mamba", "full_attention"};
  ExpectError(Parse(j), "\"layer_types\"");
  j = Qwen3Next();
  j.erase("full_attention_interval");  // neither layer_types nor the interval
  ExpectError(Parse(j), "\"full_attention_interval\"");
  j = Qwen3Next();
  j.erase("linear_num_value_heads");
  ExpectError(Parse(j), "\"linear_num_value_heads\"");
}

json Jamba() {
  json j = Base("jamba");
  j.update({{"num_hidden_layers", 8}, {"attn_layer_period", 4}, {"attn_layer_offset", 2},
            {"expert_layer_period", 2}, {"expert_layer_offset", 1}, {"num_experts", 4},
            {"num_experts_per_tok", 2}, {"mamba_d_state", 16}, {"mamba_d_conv", 4},
            {"mamba_expand", 2}, {"mamba_dt_rank", "auto"}});
  return j;
}

TEST(HfFamiliesTest, JambaPeriodsAndMamba) {
  StatusOr<ModelSpec> m = Parse(Jamba());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(m->layers[i].mixer, i % 4 == 2 ? Mixer::kAttention : Mixer::kMamba) << i;
    EXPECT_EQ(m->layers[i].ffn, i % 2 == 1 ? FfnKind::kMoe : FfnKind::kDense) << i;
  }
  EXPECT_EQ(m->mamba_version, 1);
  EXPECT_EQ(m->mamba_heads, 512);    // expand x hidden
  EXPECT_EQ(m->mamba_dt_rank, 16);   // "auto" = ceil(256 / 16)
  json j = Jamba();
  j["attn_layer_offset"] = 4;  // not below the period
  ExpectError(Parse(j), "\"attn_layer_offset\"");
  j = Jamba();
  j["sliding_window"] = -5;
  ExpectError(Parse(j), "\"sliding_window\"");
}

json NemotronH() {
  json j = Base("nemotron_h");
  j.update({{"num_hidden_layers", 5}, {"hybrid_override_pattern", "M-M*-"},
            {"attention_head_dim", 32}, {"mamba_num_heads", 16}, {"mamba_head_dim", 32},
            {"ssm_state_size", 64}, {"n_groups", 2}, {"conv_kernel", 4}, {"chunk_size", 128},
            {"mlp_hidden_act", "relu2"}});
  return j;
}

TEST(HfFamiliesTest, NemotronHPatternAndInfinity) {
  // The real files carry Python's Infinity (time_step_limit); also NaN and -Infinity elsewhere.
  std::string text = NemotronH().dump();
  text.insert(1, "\"time_step_limit\": [0.0, Infinity], \"x\": NaN, \"y\": [-Infinity],");
  StatusOr<ModelSpec> m = ParseHfConfig(text, "config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].mixer, Mixer::kMamba);
  EXPECT_EQ(m->layers[0].ffn, FfnKind::kNone);
  EXPECT_EQ(m->layers[1].mixer, Mixer::kNone);
  EXPECT_EQ(m->layers[1].ffn, FfnKind::kDense);
  EXPECT_EQ(m->layers[3].mixer, Mixer::kAttention);
  EXPECT_FALSE(m->gated_ffn);
  EXPECT_EQ(m->mamba_version, 2);
  EXPECT_EQ(m->mamba_chunk, 128);

  json j = NemotronH();
  j["hybrid_override_pattern"] = "M-M*";  // 4 characters for 5 layers
  ExpectError(Parse(j), "\"hybrid_override_pattern\"");
  j["hybrid_override_pattern"] = "M-MX-";
  ExpectError(Parse(j), "\"hybrid_override_pattern\"");
  j.erase("hybrid_override_pattern");
  ExpectError(Parse(j), "\"hybrid_override_pattern\"");
  // layers_block_type instead, with num_hidden_layers null: the list's length is the count.
  j["num_hidden_layers"] = nullptr;
  j["layers_block_type"] = {"mamba", "moe", "attention"};
  j.update({{"n_routed_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64},
            {"n_shared_experts", 1}, {"moe_shared_expert_intermediate_size", 128},
            {"moe_latent_size", 64}});
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_layers, 3);
  EXPECT_EQ(m->layers[1].ffn, FfnKind::kMoe);
  EXPECT_EQ(m->moe_latent_size, 64);
  // A number field written as Infinity names the field.
  std::string bad = NemotronH().dump();
  bad.replace(bad.find("\"ssm_state_size\":64"), 19, "\"ssm_state_size\":Infinity");
  ExpectError(ParseHfConfig(bad, "config.json"), "\"ssm_state_size\"");
}

TEST(HfFamiliesTest, MalformedJsonOffsetIgnoresRewrittenTokens) {
  // The error offset is in the original text although NaN was rewritten before it.
  const std::string text = "{\"a\": NaN, \"b\": [1,,2]}";
  StatusOr<ModelSpec> m = ParseHfConfig(text, "config.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kParseError);
  // The second comma is the 20th byte of the original line (22nd of the rewritten one).
  EXPECT_NE(m.status().message().find("at line 1, column 20"), std::string::npos) << m.status().message();
  // "NaN" inside a string stays a string; a bare NaNx is still malformed.
  EXPECT_FALSE(ParseHfConfig("{\"model_type\": NaNx}", "config.json").ok());
}

json Gemma4() {
  json text = Base("gemma4_text");
  text.update({{"head_dim", 32}, {"global_head_dim", 64}, {"num_global_key_value_heads", 1},
               {"attention_k_eq_v", true}, {"sliding_window", 128},
               {"layer_types", {"sliding_attention", "sliding_attention", "sliding_attention",
                                "full_attention"}},
               {"enable_moe_block", true}, {"num_experts", 8}, {"top_k_experts", 2},
               {"moe_intermediate_size", 64}});
  return json{{"model_type", "gemma4"}, {"text_config", text}, {"tie_word_embeddings", true}};
}

TEST(HfFamiliesTest, Gemma4WrapperGlobalLayersAndMoe) {
  StatusOr<ModelSpec> m = Parse(Gemma4());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 128);
  EXPECT_EQ(m->layers[3].window, 0);
  EXPECT_EQ(m->head_dim_of(m->layers[3]), 64);
  EXPECT_EQ(m->kv_heads_of(m->layers[3]), 1);
  EXPECT_TRUE(m->layers[3].k_eq_v);
  EXPECT_FALSE(m->layers[0].k_eq_v);
  EXPECT_EQ(m->num_moe_layers(), 4);
  EXPECT_EQ(m->shared_ffn_size, 512);  // the dense MLP beside the experts
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->norms_per_sublayer, 2);

  json j = Gemma4();
  j["text_config"]["layer_types"] = {"sliding_attention", "full_attention"};
  ExpectError(Parse(j), "\"text_config.layer_types\"");
  j = Gemma4();
  j["text_config"].erase("layer_types");  // no layer_types, no sliding_window_pattern
  ExpectError(Parse(j), "\"text_config.sliding_window_pattern\"");
  j = Gemma4();
  j["text_config"]["sliding_window"] = -1;
  ExpectError(Parse(j), "\"text_config.sliding_window\"");
  j = Gemma4();
  j["text_config"]["sliding_window"] = nullptr;  // sliding layers need a window
  ExpectError(Parse(j), "\"text_config.sliding_window\"");
  j = Gemma4();
  j["text_config"]["num_kv_shared_layers"] = 2;
  ExpectError(Parse(j), "\"text_config.num_kv_shared_layers\"");
  j = Gemma4();
  j.erase("text_config");
  ExpectError(Parse(j), "\"text_config\"");
}

TEST(HfFamiliesTest, Gemma3FillsClassDefaults) {
  // Released Gemma 3 configs omit fields equal to Gemma3TextConfig's defaults.
  json j{{"model_type", "gemma3"},
         {"text_config", {{"hidden_size", 2560}, {"intermediate_size", 10240},
                          {"num_hidden_layers", 12}, {"sliding_window", 1024}}}};
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_heads, 8);
  EXPECT_EQ(m->num_kv_heads, 4);
  EXPECT_EQ(m->head_dim, 256);
  EXPECT_EQ(m->vocab_size, 262208);
  // sliding_window_pattern 6: layers 5 and 11 full.
  for (int i = 0; i < 12; ++i) EXPECT_EQ(m->layers[i].window, (i + 1) % 6 == 0 ? 0 : 1024) << i;
}

json DeciLm() {
  json attn{{"n_heads_in_group", 4}, {"no_op", false}, {"replace_with_linear", false}};
  json noop{{"no_op", true}, {"replace_with_linear", false}, {"n_heads_in_group", nullptr}};
  json j = Base("nemotron-nas");
  j["intermediate_size"] = nullptr;
  j["num_key_value_heads"] = nullptr;
  j["block_configs"] = {
      {{"attention", attn}, {"ffn", {{"ffn_mult", 2.625}, {"no_op", false}}}},
      {{"attention", noop}, {"ffn", {{"ffn_mult", 1.0}, {"no_op", false}}}},
      {{"attention", {{"n_heads_in_group", 2}}}, {"ffn", {{"no_op", true}}}},
      {{"attention", attn}, {"ffn", {{"ffn_mult", 2.625}}}}};
  return j;
}

TEST(HfFamiliesTest, DeciLmPerLayerShapes) {
  StatusOr<ModelSpec> m = Parse(DeciLm());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // ffn_mult 2.625: 2 x 2.625 x 256 / 3 = 448 -> 512 (multiple of 256); 1.0: 170 -> 256.
  EXPECT_EQ(m->ffn_size_of(m->layers[0]), 512);
  EXPECT_EQ(m->ffn_size_of(m->layers[1]), 256);
  EXPECT_EQ(m->layers[1].mixer, Mixer::kNone);
  EXPECT_EQ(m->layers[2].ffn, FfnKind::kNone);
  EXPECT_EQ(m->kv_heads_of(m->layers[0]), 2);  // 8 heads / 4 per group
  EXPECT_EQ(m->kv_heads_of(m->layers[2]), 4);
  json j = DeciLm();
  j["block_configs"].erase(3);
  ExpectError(Parse(j), "\"block_configs\"");
  j = DeciLm();
  j["block_configs"][0]["attention"]["n_heads_in_group"] = 3;
  ExpectError(Parse(j), "\"block_configs[0].attention.n_heads_in_group\"");
  j = DeciLm();
  j["block_configs"][2]["attention"]["window_length"] = -8;
  ExpectError(Parse(j), "\"block_configs[2].attention.window_length\"");
  // replace_with_linear: a hidden x hidden matrix instead of the sublayer.
  j = DeciLm();
  j["block_configs"][1]["attention"] = {{"no_op", false}, {"replace_with_linear", true}};
  j["block_configs"][2]["ffn"] = {{"no_op", false}, {"replace_with_linear", true}};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->layers[1].attn_linear);
  EXPECT_EQ(m->layers[1].mixer, Mixer::kNone);
  EXPECT_TRUE(m->layers[2].ffn_linear);
  // Layer 1: 256 x 256 linear + FFN 3 x 256 x 256 (ffn_mult 1.0 -> 256) + 2 norms of 256.
  EXPECT_EQ(LayerParams(*m, m->layers[1]), 65536 + 196608 + 512);
  j = DeciLm();
  j["block_configs"][1]["ffn"].erase("ffn_mult");
  ExpectError(Parse(j), "\"block_configs[1].ffn.ffn_mult\"");
}

json DeepseekV32() {
  return json{{"model_type", "deepseek_v32"}, {"num_hidden_layers", 4}, {"hidden_size", 256},
              {"intermediate_size", 512}, {"num_attention_heads", 4}, {"vocab_size", 1000},
              {"q_lora_rank", 64}, {"kv_lora_rank", 32}, {"qk_nope_head_dim", 32},
              {"qk_rope_head_dim", 16}, {"v_head_dim", 32}, {"n_routed_experts", 8},
              {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64}, {"n_shared_experts", 1},
              {"first_k_dense_replace", 1}, {"index_topk", 64}, {"index_n_heads", 4},
              {"index_head_dim", 16}};
}

TEST(HfFamiliesTest, SparseAttentionFamilies) {
  StatusOr<ModelSpec> m = Parse(DeepseekV32());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const LayerSpec& l : m->layers) EXPECT_EQ(l.mixer, Mixer::kSparse);
  EXPECT_EQ(m->index_topk, 64);
  json j = DeepseekV32();
  j["model_type"] = "glm_moe_dsa";
  j["mlp_layer_types"] = {"dense", "dense", "sparse", "sparse"};
  j["indexer_types"] = {"full", "shared", "shared", "full"};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_dense_layers(), 2);
  EXPECT_TRUE(m->layers[1].shared_indexer);
  EXPECT_FALSE(m->layers[3].shared_indexer);
  EXPECT_TRUE(m->router_bias);
  j["mlp_layer_types"] = {"dense", "sparse"};
  ExpectError(Parse(j), "\"mlp_layer_types\"");
  j = DeepseekV32();
  j["index_topk"] = 0;
  ExpectError(Parse(j), "\"index_topk\"");
}

TEST(HfFamiliesTest, GlmMoeDsaClassDefaultsGiveGlm5) {
  // GlmMoeDsaConfig's documented defaults "yield a similar configuration to that of GLM-5"
  // (transformers configuration_glm_moe_dsa); GLM-5 is published as 744B total, 40B active.
  // Only the fields without a default in l2s are written; the first 3 layers are dense by the
  // class's default mlp_layer_types.
  json j{{"model_type", "glm_moe_dsa"}, {"vocab_size", 154880}, {"hidden_size", 6144},
         {"intermediate_size", 12288}, {"moe_intermediate_size", 2048},
         {"num_hidden_layers", 78}, {"num_attention_heads", 64}, {"n_shared_experts", 1},
         {"n_routed_experts", 256}, {"kv_lora_rank", 512}, {"q_lora_rank", 2048},
         {"qk_rope_head_dim", 64}, {"qk_nope_head_dim", 192}, {"v_head_dim", 256},
         {"num_experts_per_tok", 8}};
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_dense_layers(), 3);
  EXPECT_EQ(m->index_heads, 32);
  EXPECT_EQ(m->index_topk, 2048);
  const ParamCounts c = CountParams(*m);
  EXPECT_NEAR(static_cast<double>(c.total), 744e9, 0.02 * 744e9);
  EXPECT_NEAR(static_cast<double>(c.active), 40e9, 0.10 * 40e9);
}

TEST(HfFamiliesTest, LongcatZeroExpertsAndTwoSublayersPerBlock) {
  json j{{"model_type", "longcat_flash"}, {"num_layers", 2}, {"hidden_size", 256},
         {"ffn_hidden_size", 512}, {"expert_ffn_hidden_size", 64}, {"num_attention_heads", 4},
         {"vocab_size", 1000}, {"q_lora_rank", 64}, {"kv_lora_rank", 32},
         {"qk_nope_head_dim", 32}, {"qk_rope_head_dim", 16}, {"v_head_dim", 32},
         {"n_routed_experts", 8}, {"zero_expert_num", 4}, {"moe_topk", 3}};
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_layers, 4);
  EXPECT_EQ(m->num_moe_layers(), 2);
  EXPECT_EQ(m->num_zero_experts, 4);
  j.erase("num_layers");
  ExpectError(Parse(j), "\"num_layers\"");
}

TEST(HfFamiliesTest, OtherFamiliesParse) {
  json glm = Base("glm4_moe");
  glm.update({{"head_dim", 64}, {"attention_bias", true}, {"use_qk_norm", true},
              {"n_routed_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64},
              {"n_shared_experts", 1}, {"first_k_dense_replace", 1},
              {"num_nextn_predict_layers", 1}});
  StatusOr<ModelSpec> m = Parse(glm);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_EQ(m->num_moe_layers(), 3);
  EXPECT_EQ(m->mtp_layers, 1);

  json mm = Base("minimax_m2");
  mm.update({{"head_dim", 32}, {"use_qk_norm", true}, {"qk_norm_type", "per_layer"},
             {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"use_routing_bias", true},
             {"attn_type_list", {1, 1, 1, 1}}});
  m = Parse(mm);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qk_norm_full);
  mm["attn_type_list"] = {1, 0, 1, 1};
  ExpectError(Parse(mm), "\"attn_type_list\"");
  mm["attn_type_list"] = {1, 1, 1};
  ExpectError(Parse(mm), "\"attn_type_list\"");

  json phi = Base("phi3");
  phi["sliding_window"] = 2047;
  m = Parse(phi);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 2047);
  phi["sliding_window"] = -1;
  ExpectError(Parse(phi), "\"sliding_window\"");

  json ling = Base("bailing_moe");
  ling.update({{"num_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64},
               {"num_shared_experts", 1}, {"first_k_dense_replace", 1}, {"use_qkv_bias", true}});
  m = Parse(ling);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_EQ(m->num_dense_layers(), 1);
}

// Totals of the shared configs of the new families against the publishers' figures (the same
// table is in docs/MODELS.md). Language model only: vision towers are not counted.
struct Published {
  const char* file;
  double total;
  bool with_mtp;  // the figure includes the MTP module (compare total + mtp_params)
  const char* source;
};
const Published kPublished[] = {
    {"zai-org--GLM-4.7.json", 355e9, false, "GLM-4.5/4.6/4.7 model cards: 355B total, 32B active"},
    {"MiniMaxAI--MiniMax-M2.7.json", 230e9, false, "MiniMax-M2 model card: 230B total, 10B active"},
    {"deepseek-ai--DeepSeek-V3.2.json", 685e9, true,
     "DeepSeek-V3.2 HF card: 685B (671B main model + 14B MTP)"},
    {"Qwen--Qwen3-Next-80B-A3B-Thinking.json", 80e9, false, "Qwen3-Next model card: 80B total"},
    {"google--gemma-4-26B-A4B.json", 25.2e9, false,
     "Gemma 4 model card: 25.2B total (text), 3.8B active"},
    {"microsoft--phi-4.json", 14.7e9, false, "Phi-4 HF safetensors: 14.7B"},
    {"ai21labs--Jamba-v0.1.json", 51.6e9, false, "Jamba-v0.1 card: 52B total (51.6B), 12B active"},
    {"nvidia--Nemotron-H-56B-Base-8K.json", 56e9, false, "Nemotron-H paper: 56B"},
    {"nvidia--Llama-3_3-Nemotron-Super-49B-v1.json", 49.9e9, false,
     "Llama-3.3-Nemotron-Super-49B HF safetensors: 49.9B"},
    {"meituan-longcat--LongCat-Flash-Chat.json", 560e9, false,
     "LongCat-Flash report: 560B total, 18.6B-31.3B active (~27B average)"},
    {"inclusionAI--Ling-plus-base.json", 290e9, false, "Ling tech report: 290B total, 28.8B active"},
    {"Qwen--Qwen2.5-72B.json", 72.7e9, false, "Qwen2.5-72B model card: 72.7B"},
};

TEST(HfFamiliesTest, SharedConfigsWithinTwoPercentOfPublished) {
  for (const Published& p : kPublished) {
    const std::string file = std::string(L2S_SHARED_DIR) + "/models/hf/" + p.file;
    if (!std::filesystem::exists(file)) continue;
    SCOPED_TRACE(p.file);
    StatusOr<ModelSpec> m = LoadHfConfig(file);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ParamCounts c = CountParams(*m);
    const double ours = static_cast<double>(c.total + (p.with_mtp ? c.mtp : 0));
    EXPECT_NEAR(ours, p.total, 0.02 * p.total) << p.source;
  }
}

// The families added for held-out models: each config below carries the published checkpoint's
// shape fields (model cards / configs), and its totals must land within 2% of the publisher's
// figures; the structure each family reader derives is checked beside it.
struct PublishedInline {
  const char* name;
  json config;
  double total;
  double active;  // 0 = not published
};

// Granite-4.0-H-Small: attention at layers 5, 15, 25 and 35, Mamba2 elsewhere.
json GraniteLayerTypes() {
  json t = json::array();
  for (int i = 0; i < 40; ++i) t.push_back(i % 10 == 5 ? "attention" : "mamba");
  return t;
}

std::vector<PublishedInline> NewFamilyConfigs() {
  return {
      {"DeepSeek-V2 (paper: 236B total, 21B activated)",
       {{"model_type", "deepseek_v2"}, {"hidden_size", 5120}, {"num_hidden_layers", 60},
        {"num_attention_heads", 128}, {"num_key_value_heads", 128}, {"kv_lora_rank", 512},
        {"q_lora_rank", 1536}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64},
        {"v_head_dim", 128}, {"moe_intermediate_size", 1536}, {"n_routed_experts", 160},
        {"n_shared_experts", 2}, {"num_experts_per_tok", 6}, {"first_k_dense_replace", 1},
        {"intermediate_size", 12288}, {"vocab_size", 102400},
        {"topk_method", "group_limited_greedy"}},
       236e9, 21e9},
      {"DeepSeek-V2-Lite (card: 15.7B total)",
       {{"model_type", "deepseek_v2"}, {"hidden_size", 2048}, {"num_hidden_layers", 27},
        {"num_attention_heads", 16}, {"num_key_value_heads", 16}, {"kv_lora_rank", 512},
        {"q_lora_rank", nullptr}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64},
        {"v_head_dim", 128}, {"moe_intermediate_size", 1408}, {"n_routed_experts", 64},
        {"n_shared_experts", 2}, {"num_experts_per_tok", 6}, {"first_k_dense_replace", 1},
        {"intermediate_size", 10944}, {"vocab_size", 102400}},
       15.7e9, 0},
      {"Qwen1.5-MoE-A2.7B (card: 14.3B total, 2.7B activated)",
       {{"model_type", "qwen2_moe"}, {"hidden_size", 2048}, {"num_hidden_layers", 24},
        {"num_attention_heads", 16}, {"num_key_value_heads", 16}, {"intermediate_size", 5632},
        {"moe_intermediate_size", 1408}, {"shared_expert_intermediate_size", 5632},
        {"num_experts", 60}, {"num_experts_per_tok", 4}, {"vocab_size", 151936}},
       14.3e9, 2.7e9},
      {"OLMoE-1B-7B (paper: 6.9B total, 1.3B active)",
       {{"model_type", "olmoe"}, {"hidden_size", 2048}, {"num_hidden_layers", 16},
        {"num_attention_heads", 16}, {"num_key_value_heads", 16}, {"intermediate_size", 1024},
        {"num_experts", 64}, {"num_experts_per_tok", 8}, {"vocab_size", 50304},
        {"clip_qkv", nullptr}},
       6.9e9, 1.3e9},
      {"Phi-3.5-MoE (card: 41.9B total, 6.6B active)",
       {{"model_type", "phimoe"}, {"hidden_size", 4096}, {"num_hidden_layers", 32},
        {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"intermediate_size", 6400},
        {"num_local_experts", 16}, {"num_experts_per_tok", 2}, {"vocab_size", 32064},
        {"attention_bias", true}, {"sliding_window", 131072}, {"lm_head_bias", true}},
       41.9e9, 6.6e9},
      {"Granite-3.0-3B-A800M (card: 3.3B total, 800M active)",
       {{"model_type", "granitemoe"}, {"hidden_size", 1536}, {"num_hidden_layers", 32},
        {"num_attention_heads", 24}, {"num_key_value_heads", 8}, {"intermediate_size", 512},
        {"num_local_experts", 40}, {"num_experts_per_tok", 8}, {"vocab_size", 49155},
        {"tie_word_embeddings", true}, {"embedding_multiplier", 12.0}},
       3.3e9, 0},
      {"ERNIE-4.5-300B-A47B (card: 300B total, 47B activated)",
       {{"model_type", "ernie4_5_moe"}, {"hidden_size", 8192}, {"num_hidden_layers", 54},
        {"num_attention_heads", 64}, {"num_key_value_heads", 8}, {"intermediate_size", 28672},
        {"moe_intermediate_size", 3584}, {"moe_num_experts", 64}, {"moe_k", 8},
        {"moe_num_shared_experts", 0}, {"moe_layer_start_index", 3},
        {"moe_layer_end_index", 53}, {"moe_layer_interval", 1}, {"vocab_size", 103424},
        {"tie_word_embeddings", false}},
       300e9, 47e9},
      {"OLMo-2-1124-7B (HF safetensors: 7.3B)",
       {{"model_type", "olmo2"}, {"hidden_size", 4096}, {"num_hidden_layers", 32},
        {"num_attention_heads", 32}, {"num_key_value_heads", 32}, {"intermediate_size", 11008},
        {"vocab_size", 100352}},
       7.3e9, 0},
      {"Qwen3-VL-235B-A22B (language model as Qwen3-235B-A22B: 235B total, 22B activated)",
       {{"model_type", "qwen3_vl_moe"},
        {"vision_config", {{"depth", 27}}},
        {"text_config",
         {{"model_type", "qwen3_vl_moe_text"}, {"hidden_size", 4096}, {"num_hidden_layers", 94},
          {"num_attention_heads", 64}, {"num_key_value_heads", 4}, {"head_dim", 128},
          {"moe_intermediate_size", 1536}, {"num_experts", 128}, {"num_experts_per_tok", 8},
          {"intermediate_size", 12288}, {"vocab_size", 151936}}}},
       235e9, 22e9},
      {"Qwen2.5-VL-72B, fields at the top level (card: 73.4B with the 0.7B vision tower)",
       {{"model_type", "qwen2_5_vl"}, {"hidden_size", 8192}, {"num_hidden_layers", 80},
        {"num_attention_heads", 64}, {"num_key_value_heads", 8}, {"intermediate_size", 29568},
        {"vocab_size", 152064}, {"vision_config", {{"depth", 32}}}},
       72.7e9, 0},
      {"GLM-4-32B-0414 (card: 32B)",
       {{"model_type", "glm4"}, {"hidden_size", 6144}, {"num_hidden_layers", 61},
        {"num_attention_heads", 48}, {"num_key_value_heads", 2}, {"head_dim", 128},
        {"intermediate_size", 23040}, {"vocab_size", 151552}, {"attention_bias", true}},
       32.6e9, 0},
      {"Seed-OSS-36B (card: 36B)",
       {{"model_type", "seed_oss"}, {"hidden_size", 5120}, {"num_hidden_layers", 64},
        {"num_attention_heads", 80}, {"num_key_value_heads", 8}, {"head_dim", 128},
        {"intermediate_size", 27648}, {"vocab_size", 155136}, {"attention_bias", true},
        {"attention_out_bias", false}},
       36e9, 0},
      {"Command A (card: 111B)",
       {{"model_type", "cohere2"}, {"hidden_size", 12288}, {"num_hidden_layers", 64},
        {"num_attention_heads", 96}, {"num_key_value_heads", 8}, {"intermediate_size", 36864},
        {"vocab_size", 256000}, {"sliding_window", 4096}, {"sliding_window_pattern", 4}},
       111e9, 0},
      {"Command R+ (card: 104B)",
       {{"model_type", "cohere"}, {"hidden_size", 12288}, {"num_hidden_layers", 64},
        {"num_attention_heads", 96}, {"num_key_value_heads", 8}, {"intermediate_size", 33792},
        {"vocab_size", 256000}, {"use_qk_norm", true}},
       104e9, 0},
      {"dots.llm1 (report: 142B total, 14B activated)",
       {{"model_type", "dots1"}, {"hidden_size", 4096}, {"num_hidden_layers", 62},
        {"num_attention_heads", 32}, {"num_key_value_heads", 32}, {"intermediate_size", 10944},
        {"moe_intermediate_size", 1408}, {"n_routed_experts", 128}, {"num_experts_per_tok", 6},
        {"n_shared_experts", 2}, {"first_k_dense_replace", 1}, {"vocab_size", 152064}},
       142e9, 14e9},
      {"GLM-4.7-Flash (card: 30B total; its \"A3B\" is rounded and excludes the embeddings)",
       {{"model_type", "glm4_moe_lite"}, {"hidden_size", 2048}, {"num_hidden_layers", 47},
        {"num_attention_heads", 20}, {"num_key_value_heads", 20}, {"q_lora_rank", 768},
        {"kv_lora_rank", 512}, {"qk_nope_head_dim", 192}, {"qk_rope_head_dim", 64},
        {"v_head_dim", 256}, {"n_routed_experts", 64}, {"n_shared_experts", 1},
        {"num_experts_per_tok", 4}, {"moe_intermediate_size", 1536},
        {"first_k_dense_replace", 1}, {"intermediate_size", 10240}, {"vocab_size", 154880},
        {"topk_method", "noaux_tc"}, {"num_nextn_predict_layers", 1}},
       30e9, 0},
      {"Granite-4.0-H-Small (card: 32B total, 9B active)",
       {{"model_type", "granitemoehybrid"}, {"hidden_size", 4096}, {"num_hidden_layers", 40},
        {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"intermediate_size", 768},
        {"shared_intermediate_size", 1536}, {"num_local_experts", 72},
        {"num_experts_per_tok", 10}, {"mamba_n_heads", 128}, {"mamba_d_head", 64},
        {"mamba_d_state", 128}, {"mamba_n_groups", 1}, {"mamba_expand", 2},
        {"vocab_size", 100352}, {"tie_word_embeddings", true},
        {"layer_types", GraniteLayerTypes()}},
       32e9, 9e9},
      {"Qwen3.5-35B-A3B (card: 35B total, 3B activated)",
       {{"model_type", "qwen3_5_moe"},
        {"vision_config", {{"depth", 27}}},
        {"text_config",
         {{"model_type", "qwen3_5_moe_text"}, {"hidden_size", 2048}, {"num_hidden_layers", 40},
          {"num_attention_heads", 16}, {"num_key_value_heads", 2}, {"head_dim", 256},
          {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512},
          {"num_experts", 256}, {"num_experts_per_tok", 8}, {"vocab_size", 248320},
          {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32},
          {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
          {"full_attention_interval", 4}, {"mtp_num_hidden_layers", 1}}}},
       35e9, 3.3e9},
  };
}

TEST(HfFamiliesTest, NewFamiliesWithinTwoPercentOfPublished) {
  for (const PublishedInline& p : NewFamilyConfigs()) {
    SCOPED_TRACE(p.name);
    StatusOr<ModelSpec> m = Parse(p.config);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ParamCounts c = CountParams(*m);
    EXPECT_NEAR(static_cast<double>(c.total), p.total, 0.02 * p.total);
    if (p.active > 0) {
      EXPECT_NEAR(static_cast<double>(c.active), p.active, 0.05 * p.active);
    }
  }
}

TEST(HfFamiliesTest, NewFamiliesStructure) {
  // Qwen2-MoE: q/k/v biases, one gated shared expert, decoder_sparse_step as Qwen3-MoE.
  json q = Base("qwen2_moe");
  q.update({{"num_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64},
            {"shared_expert_intermediate_size", 128}, {"decoder_sparse_step", 2}});
  StatusOr<ModelSpec> m = Parse(q);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_FALSE(m->qk_norm);
  EXPECT_EQ(m->num_shared_experts, 1);
  EXPECT_EQ(m->shared_ffn_size, 128);
  EXPECT_EQ(m->misc_params_per_moe_layer, 256);  // shared_expert_gate [1, hidden]
  EXPECT_EQ(m->layers[0].ffn, FfnKind::kDense);   // (0 + 1) % 2 != 0
  EXPECT_EQ(m->layers[1].ffn, FfnKind::kMoe);
  EXPECT_EQ(m->dense_ffn_size, 512);

  // ERNIE 4.5 MoE: MoE iff (i + 1) % interval == 0 and start <= i <= end; the class defaults
  // (start 1, end = last, 2 shared experts, tied embeddings) when the fields are absent.
  json e = Base("ernie4_5_moe");
  e.update({{"num_hidden_layers", 8}, {"moe_num_experts", 8}, {"moe_k", 2},
            {"moe_intermediate_size", 64}});
  m = Parse(e);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].ffn, FfnKind::kDense);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(m->layers[i].ffn, FfnKind::kMoe) << i;
  EXPECT_EQ(m->num_shared_experts, 2);
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_TRUE(m->router_bias);
  e.update({{"moe_layer_start_index", 2}, {"moe_layer_end_index", 6},
            {"moe_layer_interval", 2}, {"use_bias", true}, {"tie_word_embeddings", false}});
  m = Parse(e);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::vector<int> moe_layers;
  for (int i = 0; i < 8; ++i)
    if (m->layers[i].ffn == FfnKind::kMoe) moe_layers.push_back(i);
  EXPECT_EQ(moe_layers, (std::vector<int>{3, 5}));  // 2 <= i <= 6 and (i + 1) % 2 == 0
  EXPECT_TRUE(m->attention_bias);
  EXPECT_TRUE(m->expert_bias);
  EXPECT_FALSE(m->tied_embeddings);
  e["moe_layer_end_index"] = 8;  // past the last layer
  ExpectError(Parse(e), "\"moe_layer_end_index\"");

  // OLMo 3: layer_types with sliding_window; q/k norm over all heads.
  json o = Base("olmo3");
  o.update({{"sliding_window", 64},
            {"layer_types",
             {"sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}}});
  m = Parse(o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qk_norm_full);
  EXPECT_EQ(m->layers[0].window, 64);
  EXPECT_EQ(m->layers[3].window, 0);
  o.erase("sliding_window");
  ExpectError(Parse(o), "\"sliding_window\"");

  // Phi-3.5-MoE: LayerNorm with biases, every layer MoE.
  json ph = Base("phimoe");
  ph.update({{"num_local_experts", 4}, {"num_experts_per_tok", 2}, {"attention_bias", true}});
  m = Parse(ph);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->layernorm_bias);
  EXPECT_TRUE(m->attention_bias);
  EXPECT_EQ(m->num_moe_layers(), 4);

  // Granite MoE shared: one shared expert of shared_intermediate_size.
  json g = Base("granitemoeshared");
  g.update({{"num_local_experts", 4}, {"num_experts_per_tok", 2},
            {"shared_intermediate_size", 96}});
  m = Parse(g);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_shared_experts, 1);
  EXPECT_EQ(m->shared_ffn_size, 96);
  EXPECT_EQ(m->expert_ffn_size, 512);

  // Granite 4.0 hybrid: mixers from layer_types, MoE + shared MLP in every layer; with no
  // experts the shared MLP is the dense FFN.
  json gh = Base("granitemoehybrid");
  gh.update({{"layer_types", {"mamba", "attention", "mamba", "mamba"}}, {"num_local_experts", 4},
             {"num_experts_per_tok", 2}, {"shared_intermediate_size", 96},
             {"mamba_n_heads", 8}, {"mamba_d_state", 16}});
  m = Parse(gh);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].mixer, Mixer::kMamba);
  EXPECT_EQ(m->layers[1].mixer, Mixer::kAttention);
  EXPECT_EQ(m->num_moe_layers(), 4);
  EXPECT_EQ(m->shared_ffn_size, 96);
  EXPECT_EQ(m->mamba_head_dim, 64);  // "auto": expand 2 x hidden 256 / 8 heads
  gh["num_local_experts"] = 0;
  m = Parse(gh);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_dense_layers(), 4);
  EXPECT_EQ(m->dense_ffn_size, 96);
  gh["layer_types"] = {"mamba", "attention", "mlp", "mamba"};
  ExpectError(Parse(gh), "\"layer_types\"");
  gh["layer_types"] = {"mamba", "attention", "mamba", "mamba"};
  gh["mamba_n_heads"] = 7;  // 512 inner channels do not split into 7 heads
  ExpectError(Parse(gh), "\"mamba_n_heads\"");

  // Qwen3.5: dense when num_experts is absent, MTP layers that share the embeddings.
  json q5 = Qwen3Next();
  q5["model_type"] = "qwen3_5";
  for (const char* k : {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                        "shared_expert_intermediate_size"})
    q5.erase(k);
  q5["mtp_num_hidden_layers"] = 1;
  m = Parse(q5);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_dense_layers(), 4);
  EXPECT_EQ(m->layers[3].mixer, Mixer::kAttention);
  EXPECT_EQ(m->mtp_layers, 1);
  EXPECT_TRUE(m->mtp_shares_embeddings);
  const ParamCounts c5 = CountParams(*m);
  ModelSpec own = *m;  // as DeepSeek-V3 stores it: the module carries embedding and head copies
  own.mtp_shares_embeddings = false;
  EXPECT_EQ(CountParams(own).mtp - c5.mtp, c5.embedding + c5.lm_head);

  // Command A: every 4th layer full, the rest slide over 4096 (Cohere2Config's derivation);
  // layer_types, when given, win; tied embeddings by default.
  json c = Base("cohere2");
  m = Parse(c);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 4096);
  EXPECT_EQ(m->layers[2].window, 4096);
  EXPECT_EQ(m->layers[3].window, 0);
  EXPECT_TRUE(m->tied_embeddings);
  c["sliding_window_pattern"] = 2;
  c["sliding_window"] = 512;
  m = Parse(c);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 512);
  EXPECT_EQ(m->layers[1].window, 0);
  c["layer_types"] = {"full_attention", "full_attention", "full_attention", "sliding_attention"};
  m = Parse(c);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 0);
  EXPECT_EQ(m->layers[3].window, 512);

  // GLM-4-0414: q/k/v biases by default, two norms per sublayer; Seed-OSS: o bias apart.
  m = Parse(Base("glm4"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_EQ(m->norms_per_sublayer, 2);
  json so = Base("seed_oss");
  so.update({{"attention_bias", true}, {"attention_out_bias", true}});
  m = Parse(so);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->attention_bias);
  EXPECT_FALSE(m->qkv_bias);
}

TEST(HfFamiliesTest, MultimodalWrappersReadTheirTextModel) {
  // mistral3 (Mistral Small 3.1): the language model is the mistral under text_config.
  json w = {{"model_type", "mistral3"}, {"vision_config", {{"hidden_size", 1024}}},
            {"text_config", Base("mistral")}};
  w["text_config"]["sliding_window"] = nullptr;
  StatusOr<ModelSpec> m = Parse(w);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->architecture, "mistral3");
  EXPECT_EQ(m->hidden_size, 256);
  EXPECT_TRUE(m->vision_tower);  // vision_config: not modelled, and said so
  EXPECT_EQ(m->layers[0].window, 0);
  // A text_config without model_type is the wrapper's usual family; qwen3_vl -> qwen3 (q/k norm).
  json q = {{"model_type", "qwen3_vl"}, {"text_config", Base("x")}};
  q["text_config"].erase("model_type");
  m = Parse(q);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qk_norm);
  EXPECT_FALSE(m->vision_tower);  // no vision_config in this one
  // qwen3_vl_text is Qwen3 under another name.
  q["text_config"]["model_type"] = "qwen3_vl_text";
  m = Parse(q);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qk_norm);
  // Errors name the field: no text_config where one is needed, a text tower l2s does not know.
  ExpectError(Parse(json{{"model_type", "qwen3_vl"}, {"hidden_size", 64}}), "\"text_config\"");
  q["text_config"]["model_type"] = "siglip_text";
  ExpectError(Parse(q), "\"text_config.model_type\"");
  m = Parse(q);
  EXPECT_EQ(m.status().code(), Status::Code::kUnsupported);
  // Kimi K2.5: a DeepSeek-V3 (kimi_k2) text tower.
  json k = {{"model_type", "kimi_k25"},
            {"text_config",
             {{"model_type", "kimi_k2"}, {"hidden_size", 256}, {"num_hidden_layers", 4},
              {"num_attention_heads", 8}, {"vocab_size", 1000}, {"intermediate_size", 512},
              {"kv_lora_rank", 64}, {"q_lora_rank", 96}, {"qk_nope_head_dim", 32},
              {"qk_rope_head_dim", 16}, {"v_head_dim", 32}, {"n_routed_experts", 8},
              {"num_experts_per_tok", 2}, {"moe_intermediate_size", 64},
              {"n_shared_experts", 1}, {"first_k_dense_replace", 1}}}};
  m = Parse(k);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->attention, AttentionKind::kMla);
  EXPECT_EQ(m->num_moe_layers(), 3);
  // A field error inside text_config names its path.
  q["text_config"]["model_type"] = "qwen3_vl_text";
  q["text_config"]["num_attention_heads"] = 0;
  ExpectError(Parse(q), "\"text_config.num_attention_heads\"");
}

TEST(HfFamiliesTest, UnknownFamilyListsTheSupportedOnes) {
  json j = Base("mamba_ultra");
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kUnsupported);
  for (const char* t : {"qwen3_next", "nemotron_h", "jamba", "gemma4", "deepseek_v32",
                        "nemotron-nas", "longcat_flash", "bailing_moe", "glm_moe_dsa",
                        "deepseek_v2", "qwen2_moe", "olmoe", "ernie4_5_moe", "mistral3"})
    EXPECT_NE(m.status().message().find(t), std::string::npos) << t;
}

}  // namespace
}  // namespace l2s
