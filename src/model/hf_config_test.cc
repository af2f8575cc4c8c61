// ParseHfConfig / LoadHfConfig: every supported family on small inline configs, and one test per
// error class checking the code and that the one-line message names the file and the field.
#include "model/hf_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace l2s {
namespace {

using nlohmann::json;

json LlamaJson() {
  return json{{"model_type", "llama"},       {"num_hidden_layers", 4},
              {"hidden_size", 256},          {"intermediate_size", 512},
              {"num_attention_heads", 8},    {"num_key_value_heads", 2},
              {"vocab_size", 1000},          {"tie_word_embeddings", false},
              {"max_position_embeddings", 8192}};
}

StatusOr<ModelSpec> Parse(const json& j) { return ParseHfConfig(j.dump(), "config.json"); }

// Expects an error of `code` whose single-line message names the file and `field`.
void ExpectError(const StatusOr<ModelSpec>& r, Status::Code code, const std::string& field) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"" + field + "\""), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(HfConfigTest, LlamaDefaults) {
  StatusOr<ModelSpec> m = Parse(LlamaJson());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "config.json");
  EXPECT_EQ(m->architecture, "llama");
  EXPECT_EQ(m->head_dim, 32);  // hidden / heads = 256 / 8
  EXPECT_EQ(m->num_kv_heads, 2);
  EXPECT_EQ(m->dense_ffn_size, 512);
  EXPECT_EQ(m->max_context, 8192);
  EXPECT_EQ(m->weight_dtype, DType::kBF16);
  ASSERT_EQ(m->layers.size(), 4u);
  EXPECT_EQ(m->num_moe_layers(), 0);
  for (const LayerSpec& l : m->layers) EXPECT_EQ(l.window, 0);
}

TEST(HfConfigTest, KvHeadsDefaultToHeadsAndNullIsUnset) {
  json j = LlamaJson();
  j.erase("num_key_value_heads");
  j["head_dim"] = nullptr;     // null = not set -> hidden / heads
  j["some_new_field"] = {1, 2};  // unknown harmless fields are ignored
  j["hidden_size"] = 256.0;    // integral floats are accepted
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_kv_heads, 8);
  EXPECT_EQ(m->head_dim, 32);
}

TEST(HfConfigTest, MistralSlidingWindowOnEveryLayer) {
  json j = LlamaJson();
  j["model_type"] = "mistral";
  j["sliding_window"] = 4096;
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const LayerSpec& l : m->layers) EXPECT_EQ(l.window, 4096);
}

TEST(HfConfigTest, Qwen2BiasesAndWindows) {
  json j = LlamaJson();
  j["model_type"] = "qwen2";
  j["use_sliding_window"] = true;
  j["sliding_window"] = 64;
  j["max_window_layers"] = 3;  // layers 3.. use the window
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qkv_bias);
  EXPECT_FALSE(m->attention_bias);
  EXPECT_EQ(m->layers[2].window, 0);
  EXPECT_EQ(m->layers[3].window, 64);
}

TEST(HfConfigTest, Qwen3MoeSparseStepAndMlpOnlyLayers) {
  json j = LlamaJson();
  j["model_type"] = "qwen3_moe";
  j["num_experts"] = 16;
  j["num_experts_per_tok"] = 4;
  j["moe_intermediate_size"] = 128;
  j["decoder_sparse_step"] = 2;  // layers 1 and 3 MoE...
  j["mlp_only_layers"] = {3};    // ...but 3 forced dense
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->qk_norm);
  EXPECT_EQ(m->layers[0].ffn, FfnKind::kDense);
  EXPECT_EQ(m->layers[1].ffn, FfnKind::kMoe);
  EXPECT_EQ(m->layers[2].ffn, FfnKind::kDense);
  EXPECT_EQ(m->layers[3].ffn, FfnKind::kDense);
  EXPECT_EQ(m->num_experts, 16);
  EXPECT_EQ(m->experts_per_token, 4);
  EXPECT_EQ(m->expert_ffn_size, 128);
  EXPECT_EQ(m->dense_ffn_size, 512);

  j["mlp_only_layers"] = {7};  // out of range
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "mlp_only_layers");
}

json DeepseekJson() {
  return json{{"model_type", "deepseek_v3"}, {"num_hidden_layers", 6},
              {"hidden_size", 256},          {"intermediate_size", 512},
              {"num_attention_heads", 4},    {"num_key_value_heads", 4},
              {"vocab_size", 1000},          {"q_lora_rank", nullptr},
              {"kv_lora_rank", 64},          {"qk_nope_head_dim", 32},
              {"qk_rope_head_dim", 16},      {"v_head_dim", 32},
              {"n_routed_experts", 8},       {"num_experts_per_tok", 2},
              {"moe_intermediate_size", 64}, {"n_shared_experts", 2},
              {"first_k_dense_replace", 1},  {"moe_layer_freq", 2},
              {"topk_method", "noaux_tc"},   {"num_nextn_predict_layers", 1},
              {"quantization_config", {{"quant_method", "fp8"}, {"fmt", "e4m3"}}}};
}

TEST(HfConfigTest, DeepseekMlaLayoutAndFp8) {
  StatusOr<ModelSpec> m = Parse(DeepseekJson());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->attention, AttentionKind::kMla);
  EXPECT_EQ(m->q_lora_rank, 0);  // null: q projected directly
  EXPECT_EQ(m->head_dim, 48);    // qk_nope + qk_rope
  EXPECT_EQ(m->num_kv_heads, 4);
  // MoE iff i >= 1 and i % 2 == 0: layers 2 and 4.
  const FfnKind want[] = {FfnKind::kDense, FfnKind::kDense, FfnKind::kMoe,
                          FfnKind::kDense, FfnKind::kMoe, FfnKind::kDense};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m->layers[i].ffn, want[i]) << i;
  EXPECT_EQ(m->num_shared_experts, 2);
  EXPECT_EQ(m->shared_ffn_size, 64);
  EXPECT_TRUE(m->router_bias);
  EXPECT_EQ(m->mtp_layers, 1);
  EXPECT_EQ(m->weight_dtype, DType::kFP8);
  EXPECT_FALSE(m->weight_block_scaled);  // no weight_block_size: per-tensor FP8
  EXPECT_FALSE(m->attention_unquantized);
  json blk = DeepseekJson();
  blk["quantization_config"]["weight_block_size"] = {128, 128};
  EXPECT_TRUE(Parse(blk)->weight_block_scaled);

  json k = DeepseekJson();
  k["model_type"] = "kimi_k2";
  StatusOr<ModelSpec> kimi = Parse(k);
  ASSERT_TRUE(kimi.ok()) << kimi.status().ToString();
  EXPECT_EQ(kimi->architecture, "kimi_k2");
  EXPECT_EQ(kimi->attention, AttentionKind::kMla);
}

json GptOssJson() {
  return json{{"model_type", "gpt_oss"},     {"num_hidden_layers", 4},
              {"hidden_size", 128},          {"intermediate_size", 128},
              {"num_attention_heads", 8},    {"num_key_value_heads", 2},
              {"head_dim", 16},              {"vocab_size", 1000},
              {"num_local_experts", 8},      {"experts_per_token", 2},
              {"sliding_window", 32},        {"attention_bias", true},
              {"quantization_config",
               {{"quant_method", "mxfp4"},
                {"modules_to_not_convert",
                 {"model.layers.*.self_attn", "model.layers.*.mlp.router",
                  "model.embed_tokens", "lm_head"}}}}};
}

TEST(HfConfigTest, GptOssWindowsBiasesSinksMxfp4) {
  json j = GptOssJson();
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // No layer_types: GptOssConfig's default alternates sliding (even) and full (odd).
  EXPECT_EQ(m->layers[0].window, 32);
  EXPECT_EQ(m->layers[1].window, 0);
  EXPECT_TRUE(m->attention_sinks);
  EXPECT_TRUE(m->expert_bias);
  EXPECT_TRUE(m->router_bias);
  EXPECT_EQ(m->weight_dtype, DType::kFP4);
  EXPECT_TRUE(m->attention_unquantized);
  EXPECT_EQ(m->num_moe_layers(), 4);

  j["layer_types"] = {"full_attention", "full_attention", "sliding_attention",
                      "sliding_attention"};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers[0].window, 0);
  EXPECT_EQ(m->layers[3].window, 32);

  j["layer_types"] = {"full_attention"};  // wrong length
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "layer_types");
  j["layer_types"] = {"full_attention", "full_attention", "weird", "full_attention"};
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "layer_types");

  j = GptOssJson();
  j["num_experts_per_tok"] = 3;  // disagrees with experts_per_token
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "num_experts_per_tok");
}

TEST(HfConfigTest, Llama4TextConfig) {
  json text = LlamaJson();
  text.erase("model_type");
  text["head_dim"] = 64;
  text["num_local_experts"] = 4;
  text["num_experts_per_tok"] = 1;
  text["intermediate_size_mlp"] = 1024;
  text["interleave_moe_layer_step"] = 2;
  text["attention_chunk_size"] = 8192;
  json j{{"model_type", "llama4"}, {"text_config", text}};
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->architecture, "llama4");
  EXPECT_EQ(m->head_dim, 64);
  EXPECT_EQ(m->layers[0].ffn, FfnKind::kDense);
  EXPECT_EQ(m->layers[1].ffn, FfnKind::kMoe);
  EXPECT_EQ(m->dense_ffn_size, 1024);  // intermediate_size_mlp
  EXPECT_EQ(m->expert_ffn_size, 512);  // intermediate_size
  EXPECT_EQ(m->num_shared_experts, 1);
  EXPECT_EQ(m->shared_ffn_size, 512);
  for (const LayerSpec& l : m->layers) EXPECT_EQ(l.window, 0);  // chunked -> full

  // Errors inside text_config name the nested field.
  j["text_config"]["hidden_size"] = "big";
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "text_config.hidden_size");
  json no_text{{"model_type", "llama4"}};
  ExpectError(Parse(no_text), Status::Code::kInvalidArgument, "text_config");
}

// ---- error classes ----

// NVIDIA Model Optimizer and llm-compressor checkpoints: the weight format from quant_algo /
// config_groups; the formats l2s does not price are Unsupported, naming the field.
TEST(HfConfigTest, ModeloptAndCompressedTensorsFormats) {
  json j = LlamaJson();
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"},
                              {"ignore", {"lm_head", "model.layers.*.self_attn*"}}};
  StatusOr<ModelSpec> m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP4);
  EXPECT_TRUE(m->attention_unquantized);
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8_PB_WO"}};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP8);
  EXPECT_TRUE(m->weight_block_scaled);
  EXPECT_FALSE(m->attention_unquantized);
  j["quantization_config"]["quant_algo"] = "W4A16_AWQ";
  ExpectError(Parse(j), Status::Code::kUnsupported, "quantization_config.quant_algo");

  const json fp8_block = {{"num_bits", 8}, {"type", "float"}, {"strategy", "block"},
                          {"block_structure", {128, 128}}};
  j["quantization_config"] = {
      {"quant_method", "compressed-tensors"},
      {"format", "float-quantized"},
      {"config_groups", {{"group_0", {{"weights", fp8_block}, {"targets", {"Linear"}}}}}},
      {"ignore", {"lm_head"}}};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP8);
  EXPECT_TRUE(m->weight_block_scaled);
  j["quantization_config"]["config_groups"]["group_0"]["weights"] = {
      {"num_bits", 4}, {"type", "float"}, {"strategy", "tensor_group"}, {"group_size", 16}};
  m = Parse(j);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP4);
  // W4A16 (4-bit integer weights): not priced.
  j["quantization_config"]["config_groups"]["group_0"]["weights"] = {
      {"num_bits", 4}, {"type", "int"}, {"strategy", "group"}, {"group_size", 32}};
  ExpectError(Parse(j), Status::Code::kUnsupported,
              "quantization_config.config_groups.group_0.weights");
  // Groups that disagree: one format per model.
  j["quantization_config"]["config_groups"] = {{"group_0", {{"weights", fp8_block}}},
                                               {"group_1",
                                                {{"weights",
                                                  {{"num_bits", 4}, {"type", "float"}}}}}};
  ExpectError(Parse(j), Status::Code::kUnsupported, "quantization_config.config_groups");
  j["quantization_config"]["config_groups"] = json::object();
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "quantization_config.config_groups");
}

TEST(HfConfigTest, HfQuantConfigBesideTheConfig) {
  ModelSpec m = *Parse(LlamaJson());
  const json q = {{"producer", {{"name", "modelopt"}}},
                  {"quantization",
                   {{"quant_algo", "NVFP4"}, {"kv_cache_quant_algo", "FP8"},
                    {"exclude_modules", {"lm_head"}}}}};
  ASSERT_TRUE(ApplyHfQuantConfig(q.dump(), "hf_quant_config.json", &m).ok());
  EXPECT_EQ(m.weight_dtype, DType::kFP4);
  EXPECT_FALSE(m.attention_unquantized);
  Status bad = ApplyHfQuantConfig(R"({"quantization": {"quant_algo": "INT8_SQ"}})",
                                  "hf_quant_config.json", &m);
  EXPECT_EQ(bad.code(), Status::Code::kUnsupported);
  EXPECT_NE(bad.message().find("\"quantization.quant_algo\""), std::string::npos)
      << bad.message();
}

TEST(HfConfigErrors, MissingFile) {
  StatusOr<ModelSpec> m = LoadHfConfig("/nonexistent/dir/config.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kNotFound);
  EXPECT_NE(m.status().message().find("/nonexistent/dir/config.json"), std::string::npos);
}

TEST(HfConfigErrors, MalformedJson) {
  for (const char* text : {"{\"model_type\": \"llama\",", "", "{]", "nul"}) {
    StatusOr<ModelSpec> m = ParseHfConfig(text, "config.json");
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.status().code(), Status::Code::kParseError) << text;
    EXPECT_NE(m.status().message().find("config.json"), std::string::npos);
  }
  StatusOr<ModelSpec> arr = ParseHfConfig("[1, 2]", "config.json");
  ASSERT_FALSE(arr.ok());
  EXPECT_EQ(arr.status().code(), Status::Code::kInvalidArgument);
}

TEST(HfConfigErrors, MissingRequiredField) {
  for (const char* field : {"num_hidden_layers", "hidden_size", "vocab_size",
                            "num_attention_heads", "intermediate_size", "model_type"}) {
    json j = LlamaJson();
    j.erase(field);
    StatusOr<ModelSpec> m = Parse(j);
    ExpectError(m, Status::Code::kInvalidArgument, field);
    EXPECT_NE(m.status().message().find("missing"), std::string::npos) << field;
  }
  json d = DeepseekJson();
  d.erase("kv_lora_rank");
  ExpectError(Parse(d), Status::Code::kInvalidArgument, "kv_lora_rank");
}

TEST(HfConfigErrors, WrongType) {
  json j = LlamaJson();
  j["hidden_size"] = "big";
  StatusOr<ModelSpec> m = Parse(j);
  ExpectError(m, Status::Code::kInvalidArgument, "hidden_size");
  EXPECT_NE(m.status().message().find("\"big\""), std::string::npos);

  j = LlamaJson();
  j["num_attention_heads"] = "x";
  m = Parse(j);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "config.json: field \"num_attention_heads\": expected a positive integer, got \"x\"");

  j = LlamaJson();
  j["tie_word_embeddings"] = "yes";
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "tie_word_embeddings");
  j = LlamaJson();
  j["num_hidden_layers"] = 3.5;
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "num_hidden_layers");
  j = LlamaJson();
  j["model_type"] = 7;
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "model_type");
  j = GptOssJson();
  j["quantization_config"] = "mxfp4";
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "quantization_config");
}

TEST(HfConfigErrors, UnknownArchitecture) {
  json j = LlamaJson();
  j["model_type"] = "mamba";
  StatusOr<ModelSpec> m = Parse(j);
  ExpectError(m, Status::Code::kUnsupported, "model_type");
  EXPECT_NE(m.status().message().find("mamba"), std::string::npos);
  EXPECT_NE(m.status().message().find("deepseek_v3"), std::string::npos);  // lists supported

  j = GptOssJson();
  j["quantization_config"]["quant_method"] = "gptq";
  ExpectError(Parse(j), Status::Code::kUnsupported, "quantization_config.quant_method");
}

TEST(HfConfigErrors, NonsenseValues) {
  struct Case {
    const char* field;
    json value;
  };
  const Case cases[] = {
      {"num_hidden_layers", 0},   {"num_hidden_layers", -3},   {"hidden_size", -1},
      {"num_attention_heads", 0}, {"vocab_size", 0},           {"intermediate_size", 0},
      {"num_key_value_heads", 3},  // does not divide 8 heads
      {"num_key_value_heads", 16},  // more kv heads than heads
      {"num_hidden_layers", 1e12},  // absurdly large
      {"hidden_size", 18446744073709551615ULL},
  };
  for (const Case& c : cases) {
    json j = LlamaJson();
    j[c.field] = c.value;
    SCOPED_TRACE(std::string(c.field) + " = " + c.value.dump());
    ExpectError(Parse(j), Status::Code::kInvalidArgument, c.field);
  }
  // Heads not dividing hidden when head_dim is absent.
  json j = LlamaJson();
  j["num_attention_heads"] = 6;
  j["num_key_value_heads"] = 6;
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "num_attention_heads");
  // Top-k larger than the expert count.
  j = GptOssJson();
  j["experts_per_token"] = 9;
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "experts_per_token");
  // Sliding layers without a window.
  j = GptOssJson();
  j["sliding_window"] = 0;
  ExpectError(Parse(j), Status::Code::kInvalidArgument, "sliding_window");
}

}  // namespace
}  // namespace l2s
