// Input checks (config_lint.h) and model resolution (model_source.h): the exact warning lines for
// misspelled keys, unparseable dtypes and a size far from the name; none on the shipped configs
// and presets; --model org/name in the config folders and a temporary HuggingFace cache.
#include "model/config_lint.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "model/counts.h"
#include "model/hf_config.h"
#include "model/json_fields.h"
#include "model/model_source.h"
#include "model/presets.h"

namespace l2s {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kShared = L2S_SHARED_DIR;
const std::string kHfDir = kShared + "/models/hf";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The importer's own reader: configs may hold NaN / Infinity.
json ReadJson(const std::string& path) {
  StatusOr<json> j = jsonio::Parse(Slurp(path), path);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : json();
}

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& stem)
      : path(fs::temp_directory_path() / (stem + "." + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(EditDistanceTest, HandDerived) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("abc", ""), 3);
  EXPECT_EQ(EditDistance("", "ab"), 2);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("bfloat61", "bfloat16"), 1);  // one transposition
  EXPECT_EQ(EditDistance("ca", "abc"), 3);             // OSA: no edit of a transposed pair
  EXPECT_EQ(EditDistance("first_k_dense_replac", "first_k_dense_replace"), 1);
  EXPECT_EQ(EditDistance("n_shared_expert", "n_shared_experts"), 1);
  EXPECT_EQ(EditDistance("num_nextn_predcit_layers", "num_nextn_predict_layers"), 1);
  // Symmetric, and zero only on equal strings.
  for (const auto& [a, b] : {std::pair{"hidden_size", "hiden_sizes"}, {"abcd", "badc"}}) {
    EXPECT_EQ(EditDistance(a, b), EditDistance(b, a));
    EXPECT_GT(EditDistance(a, b), 0);
  }
  EXPECT_EQ(MaxTypoDistance(5), 0);
  EXPECT_EQ(MaxTypoDistance(6), 1);
  EXPECT_EQ(MaxTypoDistance(11), 1);
  EXPECT_EQ(MaxTypoDistance(12), 2);
}

// NearestIndex: the smallest distance within the bound wins, ties the earlier candidate, a
// negative distance is no candidate, and nothing within the bound is -1.
TEST(EditDistanceTest, NearestIndexPicksTheSmallestWithinTheBound) {
  const std::vector<int> d = {3, 1, -1, 1, 0};
  auto at = [&](size_t i) { return d[i]; };
  EXPECT_EQ(NearestIndex(d.size(), 2, at), 4);
  EXPECT_EQ(NearestIndex(4, 2, at), 1);   // ties: the earlier (1 before 3)
  EXPECT_EQ(NearestIndex(1, 2, at), -1);  // 3 is beyond the bound
  EXPECT_EQ(NearestIndex(3, 0, at), -1);  // -1 is no candidate
  EXPECT_EQ(NearestIndex(0, 5, at), -1);
}

// Random strings: the distance is a metric bounded by plain Levenshtein's and below by the
// length difference.
TEST(EditDistanceTest, RandomInvariants) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  auto word = [&] {
    std::string s(next() % 8, 'a');
    for (char& c : s) c = static_cast<char>('a' + next() % 3);
    return s;
  };
  for (int i = 0; i < 2000; ++i) {
    const std::string a = word(), b = word();
    const int d = EditDistance(a, b);
    EXPECT_EQ(d, EditDistance(b, a));
    EXPECT_EQ(d == 0, a == b);
    EXPECT_GE(d, static_cast<int>(a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()));
    EXPECT_LE(d, static_cast<int>(std::max(a.size(), b.size())));
  }
}

// The issue's three misspellings, on the shipped DeepSeek-V3 config: one line each, naming the
// key and the known key it looks like.
TEST(ConfigLintTest, MisspelledKeysOnDeepSeekV3) {
  const std::string path = kHfDir + "/deepseek-ai--DeepSeek-V3.json";
  if (!fs::exists(path)) GTEST_SKIP() << "no shared dir at " << kShared;
  json j = ReadJson(path);
  EXPECT_TRUE(LintHfConfig(j, "v3.json").empty());
  for (const auto& [right, wrong] :
       {std::pair<std::string, std::string>{"first_k_dense_replace", "first_k_dense_replac"},
        {"num_nextn_predict_layers", "num_nextn_predict_layer"},
        {"n_shared_experts", "n_shared_expert"}}) {
    json k = j;
    k[wrong] = k[right];
    k.erase(right);
    const std::vector<std::string> w = LintHfConfig(k, "v3.json");
    ASSERT_EQ(w.size(), 1u) << wrong;
    EXPECT_EQ(w[0], "v3.json: unknown field \"" + wrong + "\" (did you mean \"" + right +
                        "\"?); it is ignored");
    // The config still parses (the misspelled key is ignored): hence the warning.
    EXPECT_TRUE(ParseHfConfig(k.dump(), "v3.json").ok()) << wrong;
  }
}

TEST(ConfigLintTest, ExactMessages) {
  json j = {{"model_type", "llama"}, {"hidden_size", 64}, {"torch_dtype", "bfloat61"},
            {"Hidden_Sise", 1},      {"zzz", 1},          {"some_new_field", 2}};
  const std::vector<std::string> w = LintHfConfig(j, "c.json");
  ASSERT_EQ(w.size(), 1u);  // Hidden_Sise: hidden_size is set; zzz, some_new_field: near nothing
  EXPECT_EQ(w[0],
            "c.json: field \"torch_dtype\": unrecognised value \"bfloat61\" (did you mean "
            "\"bfloat16\"?; expected one of auto, bfloat16, float16, float32, float64, half, "
            "float, double, int8, float8_e4m3fn, float8_e5m2); it is ignored");
  // Case-insensitive, and under text_config with its prefix; a non-string dtype.
  json k = {{"model_type", "llama4"},
            {"dtype", 16},
            {"text_config", {{"Num_Hidden_Layers", 4}, {"num_local_expert", 8}}}};
  const std::vector<std::string> v = LintHfConfig(k, "c.json");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "c.json: field \"dtype\": unrecognised value 16 (expected one of auto, bfloat16, "
                  "float16, float32, float64, half, float, double, int8, float8_e4m3fn, "
                  "float8_e5m2); it is ignored");
  EXPECT_EQ(v[1], "c.json: unknown field \"text_config.Num_Hidden_Layers\" (did you mean "
                  "\"text_config.num_hidden_layers\"?); it is ignored");
  EXPECT_EQ(v[2], "c.json: unknown field \"text_config.num_local_expert\" (did you mean "
                  "\"text_config.num_local_experts\"?); it is ignored");
}

// Only the first 4,096 keys of an object are checked (nlohmann::json iterates them sorted).
TEST(ConfigLintTest, KeysCheckedPerObjectAreBounded) {
  for (const int filler : {4000, 5000}) {
    json j = {{"model_type", "llama"}, {"num_nextn_predict_layer", 1}, {"vocab_sise", 1}};
    for (int i = 0; i < filler; ++i) j[fmt::format("k{:05d}", i)] = i;
    const std::vector<std::string> w = LintHfConfig(j, "c.json");
    // "k....." sort before "model_type", "num_nextn_predict_layer", "vocab_sise": past the bound
    // with 5,000 of them.
    ASSERT_EQ(w.size(), filler == 4000 ? 2u : 0u) << filler;
    if (filler == 4000) {
      EXPECT_EQ(w[0], "c.json: unknown field \"num_nextn_predict_layer\" (did you mean "
                      "\"num_nextn_predict_layers\"?); it is ignored");
      EXPECT_EQ(w[1], "c.json: unknown field \"vocab_sise\" (did you mean \"vocab_size\"?); it is "
                      "ignored");
    }
  }
}

// Every key of every shipped config is known (read or deliberately ignored): no warning, and no
// unknown key that a later edit could turn into a false "did you mean".
TEST(ConfigLintTest, NoWarningOnShippedConfigs) {
  if (!fs::exists(kHfDir)) GTEST_SKIP() << "no shared dir at " << kShared;
  int files = 0;
  for (const auto& e : fs::directory_iterator(kHfDir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    SCOPED_TRACE(e.path().string());
    const json j = ReadJson(e.path().string());
    EXPECT_TRUE(LintHfConfig(j, "x").empty());
    for (const auto& [k, v] : j.items()) EXPECT_TRUE(IsKnownHfKey(k)) << k;
    if (j.contains("text_config")) {
      for (const auto& [k, v] : j["text_config"].items()) EXPECT_TRUE(IsKnownHfKey(k)) << k;
    }
    // And through the loader: lint plus the named-size check.
    std::vector<std::string> warnings;
    StatusOr<ModelSpec> m = LoadModelFrom(e.path().string(), ModelSearchPaths{}, &warnings);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_TRUE(warnings.empty()) << warnings[0];
  }
  EXPECT_GE(files, 25);
}

// The known-key list covers every key the HF reader names: each quoted identifier in its source
// is a known key or one of the values / nested keys below. A key the importer starts to read
// must be added to kImporterKeys (config_lint.cc), else its correct spelling could be reported
// as a typo of another key.
TEST(ConfigLintTest, ImporterKeysCoverHfConfigSource) {
  // Every file of the reader (hf_readers.h lists them).
  std::string src;
  for (const char* f : {"hf_config.cc", "hf_read_common.cc", "hf_read_transformers.cc",
                        "hf_read_hybrid.cc", "hf_quant.cc"}) {
    const std::string text = Slurp(std::string(L2S_SOURCE_DIR) + "/src/model/" + f);
    ASSERT_FALSE(text.empty()) << f;
    src += text;
  }
  const std::set<std::string> not_keys = {
      // model_type values
      "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v3", "kimi_k2",
      "gpt_oss", "llama4", "llama4_text", "deepseek_v32", "glm4_moe", "glm_moe_dsa", "minimax_m2",
      "qwen3_next", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text", "phi3", "jamba",
      "nemotron_h", "longcat_flash", "bailing_moe", "bailing_moe_v2", "deepseek_v4",
      "deepseek_v2", "qwen2_moe", "olmoe", "olmo2", "olmo3", "phimoe", "granite", "granitemoe",
      "granitemoeshared", "smollm3", "ernie4_5", "ernie4_5_moe", "qwen3_vl_moe_text", "glm",
      "glm4", "seed_oss", "cohere", "cohere2", "dots1", "granitemoehybrid",
      "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text", "kimi_k25",
      "glm4_moe_lite",
      // multimodal wrappers and their text towers' model_type values
      "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "mistral3", "llava", "llava_next",
      "qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text",
      // values of layer_types, mlp_layer_types, indexer_types, layers_block_type, topk_method,
      // zero_expert_type, qk_norm_type, quant_method
      "sliding_attention", "full_attention", "chunked_attention", "linear_attention", "dense",
      "sparse", "full", "shared", "mamba", "attention", "mlp", "moe", "greedy", "noaux_tc",
      "identity", "per_head", "per_layer", "fp8", "fbgemm_fp8", "mxfp4", "self_attn", "auto",
      // keys nested in quantization_config, hf_quant_config.json and block_configs (not
      // linted), and their values
      "quantization", "quant_algo", "exclude_modules", "config_groups", "weights", "num_bits",
      "type", "strategy", "ignore", "modelopt", "int", "float", "tensor", "block",
      "quant_method", "modules_to_not_convert", "weight_block_size", "ffn", "ffn_mult", "n_heads_in_group", "no_op",
      "replace_with_linear", "window_length"};
  const std::regex quoted("\"([a-z][a-z0-9_]+)\"");
  int seen = 0;
  for (std::sregex_iterator it(src.begin(), src.end(), quoted), end; it != end; ++it) {
    const std::string s = (*it)[1];
    if (not_keys.count(s)) continue;
    ++seen;
    EXPECT_TRUE(std::find(HfImporterKeys().begin(), HfImporterKeys().end(), s) !=
                HfImporterKeys().end())
        << "the HF reader reads \"" << s << "\": add it to kImporterKeys in config_lint.cc";
  }
  EXPECT_GT(seen, 80);
  // The two lists do not overlap.
  for (std::string_view k : HfIgnoredKeys())
    EXPECT_TRUE(std::find(HfImporterKeys().begin(), HfImporterKeys().end(), k) ==
                HfImporterKeys().end())
        << k;
}

TEST(NamedSizeTest, Parse) {
  auto total = [](std::string_view n) { return ParseNamedSize(n)->total_params; };
  auto active = [](std::string_view n) { return ParseNamedSize(n)->active_params; };
  EXPECT_DOUBLE_EQ(total("meta-llama/Meta-Llama-3.1-70B"), 70e9);
  EXPECT_DOUBLE_EQ(total("mistralai--Mixtral-8x22B-v0.1"), 176e9);
  EXPECT_DOUBLE_EQ(total("Qwen3-235B-A22B"), 235e9);
  EXPECT_DOUBLE_EQ(active("Qwen3-235B-A22B"), 22e9);
  EXPECT_DOUBLE_EQ(total("gpt-moe-1.6t"), 1.6e12);
  EXPECT_DOUBLE_EQ(total("Qwen2.5-0.5B"), 0.5e9);
  EXPECT_DOUBLE_EQ(total("SmolLM-135M"), 135e6);
  EXPECT_EQ(ParseNamedSize("Qwen1.5-MoE-A2.7B")->total_params, 0);  // "7B" of "2.7B" is no token
  EXPECT_DOUBLE_EQ(active("Qwen1.5-MoE-A2.7B"), 2.7e9);
  // Llama 4: with an expert count, the size is the active one.
  EXPECT_EQ(ParseNamedSize("Llama-4-Maverick-17B-128E-Instruct")->total_params, 0);
  EXPECT_DOUBLE_EQ(active("Llama-4-Maverick-17B-128E-Instruct"), 17e9);
  for (const char* none : {"deepseek-ai/DeepSeek-V3.2", "Nemotron-H-Base-8K", "phi-4", "GLM-4.7",
                           "MiniMax-M2.7", "Kimi-K2-Instruct", "gpt-oss", "a100", "v70B1"})
    EXPECT_FALSE(ParseNamedSize(none).has_value()) << none;
}

// The issue's case: Llama-3.1-70B with an extra zero. On hidden_size it is an error now (above
// ModelLimits' 65,536); on intermediate_size it parses, and the size check warns.
TEST(NamedSizeTest, ExtraZeroOnLlama70B) {
  const std::string path = kHfDir + "/meta-llama--Meta-Llama-3.1-70B.json";
  if (!fs::exists(path)) GTEST_SKIP() << "no shared dir at " << kShared;
  json j = ReadJson(path);
  TempDir dir("l2s_named_size");
  const fs::path f = dir.path / "meta-llama--Meta-Llama-3.1-70B.json";
  j["hidden_size"] = 81920;
  WriteFile(f, j.dump());
  std::vector<std::string> w;
  EXPECT_FALSE(LoadModelFrom(f.string(), ModelSearchPaths{}, &w).ok());
  j["hidden_size"] = 8192;
  j["intermediate_size"] = 286720;
  WriteFile(f, j.dump());
  StatusOr<ModelSpec> m = LoadModelFrom(f.string(), ModelSearchPaths{}, &w);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const double total = static_cast<double>(CountParams(*m).total);
  EXPECT_GT(total, 0.5e12);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], fmt::format("meta-llama--Meta-Llama-3.1-70B: the config gives {:.1f}B "
                              "parameters, {:.1f}x the 70B in its name; check hidden_size, "
                              "intermediate_size, num_hidden_layers and the expert counts",
                              total / 1e9, total / 70e9));
  j["intermediate_size"] = 28672;
  // _name_or_path wins over the file name.
  j["_name_or_path"] = "acme/Tiny-1B";
  j["hidden_size"] = 8192;
  WriteFile(f, j.dump());
  w.clear();
  ASSERT_TRUE(LoadModelFrom(f.string(), ModelSearchPaths{}, &w).ok());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("acme/Tiny-1B: the config gives 70.6B parameters, 70.6x the 1B in its name",
                       0),
            0u)
      << w[0];
}

// A Model Optimizer checkpoint folder: config.json without quantization_config and
// hf_quant_config.json beside it. The folder (or its config.json) loads as FP4; a
// quantization_config in config.json wins over the side file.
TEST(ModelSourceTest, HfQuantConfigBesideConfigJson) {
  TempDir dir("l2s_hf_quant");
  const json cfg = {{"model_type", "llama"},       {"num_hidden_layers", 2},
                    {"hidden_size", 256},          {"intermediate_size", 512},
                    {"num_attention_heads", 8},    {"vocab_size", 1000}};
  WriteFile(dir.path / "config.json", cfg.dump());
  StatusOr<ModelSpec> m = LoadModelFrom(dir.path.string(), ModelSearchPaths{}, nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kBF16);
  WriteFile(dir.path / "hf_quant_config.json",
            R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4",
                "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}})");
  m = LoadModelFrom(dir.path.string(), ModelSearchPaths{}, nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP4);
  json fp8 = cfg;
  fp8["quantization_config"] = {{"quant_method", "fp8"}};
  WriteFile(dir.path / "config.json", fp8.dump());
  m = LoadModelFrom((dir.path / "config.json").string(), ModelSearchPaths{}, nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weight_dtype, DType::kFP8);
  // A side file l2s cannot read is an error naming it, not a silent bf16.
  WriteFile(dir.path / "config.json", cfg.dump());
  WriteFile(dir.path / "hf_quant_config.json", R"({"quantization": {"quant_algo": "INT4_AWQ"}})");
  m = LoadModelFrom(dir.path.string(), ModelSearchPaths{}, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("hf_quant_config.json"), std::string::npos)
      << m.status().message();
}

TEST(NamedSizeTest, ActiveSizeAndNoWarningOnPresets) {
  for (const std::string& n : ModelPresetNames()) {
    StatusOr<ModelSpec> m = ModelPreset(n);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(NamedSizeWarning(*m, n), "") << n;
    std::vector<std::string> w;
    ASSERT_TRUE(LoadModelFrom(n, ModelSearchPaths{}, &w).ok());
    EXPECT_TRUE(w.empty()) << n;
  }
  // Qwen3-30B-A3B's counts under a name claiming 30B active.
  StatusOr<ModelSpec> q = ModelPreset("qwen3-30b-a3b");
  ASSERT_TRUE(q.ok());
  const double active = static_cast<double>(CountParams(*q).active);
  EXPECT_EQ(NamedSizeWarning(*q, "x-30B-A30B"),
            fmt::format("x-30B-A30B: the config gives {:.1f}B active parameters, {:.1f}x the A30B "
                        "in its name; check hidden_size, intermediate_size, num_hidden_layers "
                        "and the expert counts",
                        active / 1e9, active / 30e9));
}

TEST(ModelSourceTest, RepoIdShape) {
  EXPECT_TRUE(LooksLikeRepoId("deepseek-ai/DeepSeek-R1"));
  EXPECT_TRUE(LooksLikeRepoId("Qwen/Qwen2.5-72B"));
  for (const char* no : {"", "llama", "/abs/path", "a/b/c", "a/", "/b", "../x", "a b/c", "a/.."})
    EXPECT_FALSE(LooksLikeRepoId(no)) << no;
}

// An unknown bare name says which known model it is near: a repo whose config l2s would find (a
// config folder's org--name.json, the hub cache's models--org--name) under its name in another
// case or misspelt, or a preset within a misspelling; nothing when none is near.
TEST(ModelSourceTest, UnknownNameSuggestsTheNearestKnownModel) {
  TempDir dir("l2s_model_near");
  ModelSearchPaths paths;
  paths.config_dirs = {(dir.path / "configs").string()};
  paths.hf_hub_cache = (dir.path / "hub").string();
  WriteFile(dir.path / "configs" / "acme--Foo-R1.json", "{}");
  fs::create_directories(dir.path / "hub" / "models--other--Bar-Chat" / "snapshots");
  auto message = [&](const char* name) {
    StatusOr<ModelSpec> m = LoadModelFrom(name, paths, nullptr);
    EXPECT_FALSE(m.ok()) << name;
    const std::string msg = m.status().message();
    return msg.substr(0, msg.find("; presets: "));
  };
  EXPECT_EQ(message("foo-r2"),
            "unknown model \"foo-r2\": not a preset and no such file (did you mean acme/Foo-R1?)");
  EXPECT_EQ(message("bar-chatt"),
            "unknown model \"bar-chatt\": not a preset and no such file (did you mean "
            "other/Bar-Chat?)");
  EXPECT_EQ(message("llama-3.1-8c"),
            "unknown model \"llama-3.1-8c\": not a preset and no such file (did you mean "
            "llama-3.1-8b?)");
  EXPECT_EQ(message("nosuch"), "unknown model \"nosuch\": not a preset and no such file");
  // A name inside a known one, or holding one (at least 6 characters): the names people type.
  EXPECT_EQ(message("Llama-3.1-70B-Instruct"),
            "unknown model \"Llama-3.1-70B-Instruct\": not a preset and no such file (did you "
            "mean llama-3.1-70b?)");
  EXPECT_EQ(message("gpt-oss"),
            "unknown model \"gpt-oss\": not a preset and no such file (did you mean "
            "gpt-oss-120b?)");
  EXPECT_EQ(message("Foo-R1-0528"),
            "unknown model \"Foo-R1-0528\": not a preset and no such file (did you mean "
            "acme/Foo-R1?)");
  EXPECT_EQ(message("r1"), "unknown model \"r1\": not a preset and no such file");  // too short
}

// The smallest Llama config the model sources load (the repo-id and bare-name tests).
constexpr const char* kTinyLlamaConfig =
    R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
        "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100})";

// A bare name equal to one known model's name but for letter case loads it (a preset first); a
// name two repositories share stays a question.
TEST(ModelSourceTest, BareNameInAnyCaseLoadsTheOneModelItNames) {
  TempDir dir("l2s_model_bare");
  const std::string cfg = kTinyLlamaConfig;
  ModelSearchPaths paths;
  paths.config_dirs = {(dir.path / "configs").string()};
  WriteFile(dir.path / "configs" / "acme--Foo-R1.json", cfg);
  WriteFile(dir.path / "configs" / "acme--Twin.json", cfg);
  WriteFile(dir.path / "configs" / "other--Twin.json", cfg);
  StatusOr<ModelSpec> foo = LoadModelFrom("foo-r1", paths, nullptr);
  ASSERT_TRUE(foo.ok()) << foo.status().message();
  EXPECT_EQ(foo->name, "acme/Foo-R1");  // the repo id, as the launch commands load it
  EXPECT_EQ(foo->num_layers, 2);
  StatusOr<ModelSpec> preset = LoadModelFrom("Llama-3.1-8B", paths, nullptr);
  ASSERT_TRUE(preset.ok()) << preset.status().message();
  EXPECT_EQ(preset->name, "llama-3.1-8b");
  StatusOr<ModelSpec> twin = LoadModelFrom("twin", paths, nullptr);
  ASSERT_FALSE(twin.ok());
  EXPECT_NE(twin.status().message().find("(did you mean "), std::string::npos)
      << twin.status().message();
}

// --draft-model with a config l2s can read prices the draft's own shape. A Llama-3.1-8B draft of
// 16 heads / 4 KV heads x 128, FFN 8192, a 16,000-token draft vocabulary:
//   fc 3 x 4096^2 = 50,331,648; attention with q/k/v reading 2h = 8192: q 8192 x 2048 +
//   k, v 2 x 8192 x 512 + o 2048 x 4096 = 33,554,432; FFN 3 x 4096 x 8192 = 100,663,296;
//   norms 2 x 4096 + the final 4096 = 12,288; LM head 16,000 x 4096 = 65,536,000
//   = 250,097,664 parameters.
TEST(ModelSourceTest, DraftModelConfigGivesTheDraftsShape) {
  TempDir dir("l2s_draft_cfg");
  ModelSearchPaths paths;
  paths.config_dirs = {(dir.path / "configs").string()};
  WriteFile(dir.path / "configs" / "acme--Llama8B-Eagle3.json",
            R"({"hidden_size": 4096, "num_attention_heads": 16, "num_key_value_heads": 4,
                "head_dim": 128, "intermediate_size": 8192, "vocab_size": 128256,
                "draft_vocab_size": 16000})");
  ModelSpec m = *ModelPreset("llama-3.1-8b");
  ASSERT_TRUE(AttachDraftModelFrom("acme/Llama8B-Eagle3", paths, &m).ok());
  EXPECT_EQ(m.draft_heads, 16);
  EXPECT_EQ(m.draft_kv_heads, 4);
  EXPECT_EQ(m.draft_vocab, 16000);
  EXPECT_EQ(CountParams(m).mtp, 250'097'664);
  // Not found: the rule (the model's shape), as CountsTest and the simulator test derive it.
  ModelSpec r = *ModelPreset("llama-3.1-8b");
  ASSERT_TRUE(AttachDraftModelFrom("acme/Nowhere", paths, &r).ok());
  EXPECT_TRUE(r.draft_config.empty());
  EXPECT_EQ(CountParams(r).mtp, 424'685'568);
  // A config found but not this model's draft, or not usable: one line naming the file.
  auto err = [&](const char* text) {
    WriteFile(dir.path / "configs" / "acme--Bad.json", text);
    ModelSpec b = *ModelPreset("llama-3.1-8b");
    const Status st = AttachDraftModelFrom("acme/Bad", paths, &b);
    EXPECT_FALSE(st.ok()) << text;
    return st.message();
  };
  EXPECT_NE(err(R"({"hidden_size": 8192, "num_attention_heads": 64, "intermediate_size": 1})")
                .find("has hidden_size 8192, not the model's 4096"),
            std::string::npos);
  // The fields read as the HF readers read them (json_fields.h ObjectReader, ReadGqaHeads).
  EXPECT_NE(err("{}").find(": field \"hidden_size\": required field is missing"),
            std::string::npos);
  EXPECT_NE(err(R"({"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 5,
                    "intermediate_size": 1, "vocab_size": 10})")
                .find("field \"num_key_value_heads\": expected a divisor of "
                      "num_attention_heads (32), got 5"),
            std::string::npos);
  EXPECT_NE(err("[1]").find("is not a JSON object"), std::string::npos);
  // Read by the model's own reader (jsonio::Parse): where the text breaks, and no key twice.
  EXPECT_NE(err("[1").find("malformed JSON at line 1"), std::string::npos) << err("[1");
  EXPECT_NE(err(R"({"hidden_size": 4096, "hidden_size": 8192})").find("\"hidden_size\" is given twice"),
            std::string::npos);
}

// A repo id with no local config suggests the preset and the local repository its name may mean:
// the same name in another case, inside the other (at least 6 characters), or a misspelling.
TEST(ModelSourceTest, UnknownRepoIdSuggestsWhatItMayMean) {
  TempDir dir("l2s_model_source_near");
  ModelSearchPaths paths;
  paths.config_dirs = {(dir.path / "configs").string()};
  WriteFile(dir.path / "configs" / "meta-llama--Meta-Llama-3.1-70B.json", kTinyLlamaConfig);
  WriteFile(dir.path / "configs" / "deepseek-ai--DeepSeek-R1.json", kTinyLlamaConfig);
  auto head = [&](const std::string& id) {
    StatusOr<ModelSpec> m = LoadModelFrom(id, paths, nullptr);
    EXPECT_FALSE(m.ok()) << id;
    const std::string msg = m.status().message();
    return msg.substr(0, msg.find(": not a preset"));
  };
  EXPECT_EQ(head("meta-llama/Llama-3.1-70B"),
            "unknown model \"meta-llama/Llama-3.1-70B\" (did you mean llama-3.1-70b or "
            "meta-llama/Meta-Llama-3.1-70B?)");
  EXPECT_EQ(head("deepseek-ai/DeepSeek-R1-0528"),
            "unknown model \"deepseek-ai/DeepSeek-R1-0528\" (did you mean deepseek-ai/DeepSeek-R1?)");
  EXPECT_EQ(head("meta-llama/Llama-3.1-8B-Instruct"),
            "unknown model \"meta-llama/Llama-3.1-8B-Instruct\" (did you mean llama-3.1-8b?)");
  EXPECT_EQ(head("acme/Unrelated"), "unknown model \"acme/Unrelated\"");
  EXPECT_EQ(head("x/r1"), "unknown model \"x/r1\"");  // too short to be inside another name
}

// org/name: the config folders first, then the hub cache's refs/main snapshot, else the newest.
TEST(ModelSourceTest, RepoIdInConfigDirsAndHubCache) {
  TempDir dir("l2s_model_source");
  const std::string cfg = kTinyLlamaConfig;
  ModelSearchPaths paths;
  paths.config_dirs = {(dir.path / "configs").string()};
  paths.hf_hub_cache = (dir.path / "hub").string();

  // Nowhere: one line listing both places.
  StatusOr<ModelSpec> none = LoadModelFrom("acme/Foo", paths, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
  const std::string msg = none.status().message();
  EXPECT_EQ(msg.rfind("unknown model \"acme/Foo\": not a preset, no such file, and no config.json "
                      "for HuggingFace repo acme/Foo in " +
                          (dir.path / "configs" / "acme--Foo.json").string() + ", " +
                          (dir.path / "hub" / "models--acme--Foo" / "snapshots" / "*" /
                           "config.json")
                              .string() +
                          " (l2s reads local files only: fetch it with `huggingface-cli download "
                          "acme/Foo config.json`); presets: ",
                      0),
            0u)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);

  // Two snapshots, no refs: the newer config.json.
  const fs::path snaps = dir.path / "hub" / "models--acme--Foo" / "snapshots";
  WriteFile(snaps / "aaaa" / "config.json", cfg);
  json newer = json::parse(cfg);
  newer["num_hidden_layers"] = 3;
  WriteFile(snaps / "bbbb" / "config.json", newer.dump());
  fs::last_write_time(snaps / "aaaa" / "config.json",
                      fs::last_write_time(snaps / "bbbb" / "config.json") + std::chrono::hours(1));
  StatusOr<ModelSpec> m = LoadModelFrom("acme/Foo", paths, nullptr);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->num_layers, 2);  // aaaa is newer
  EXPECT_EQ(m->name, "acme/Foo");
  // refs/main names the other one.
  WriteFile(dir.path / "hub" / "models--acme--Foo" / "refs" / "main", "bbbb");
  m = LoadModelFrom("acme/Foo", paths, nullptr);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->num_layers, 3);
  // A config folder's org--name.json comes first.
  json flat = json::parse(cfg);
  flat["num_hidden_layers"] = 5;
  WriteFile(dir.path / "configs" / "acme--Foo.json", flat.dump());
  m = LoadModelFrom("acme/Foo", paths, nullptr);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->num_layers, 5);
  std::vector<std::string> looked;
  StatusOr<std::string> found = FindRepoConfig("acme/Foo", paths, &looked);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, (dir.path / "configs" / "acme--Foo.json").string());
  EXPECT_EQ(looked.size(), 1u);
}

TEST(ModelSourceTest, SharedRepoIdsResolve) {
  if (!fs::exists(kHfDir)) GTEST_SKIP() << "no shared dir at " << kShared;
  ModelSearchPaths paths;
  paths.config_dirs = {kHfDir};
  std::vector<std::string> w;
  StatusOr<ModelSpec> m = LoadModelFrom("deepseek-ai/DeepSeek-R1", paths, &w);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "deepseek-ai/DeepSeek-R1");
  EXPECT_EQ(m->architecture, "deepseek_v3");
  EXPECT_TRUE(w.empty());
  // The default paths find it too (../shared beside the source tree).
  EXPECT_TRUE(LoadModel("deepseek-ai/DeepSeek-R1").ok());

  // A hub snapshot's config.json is named by its repo (models--org--name), by path or by id.
  TempDir dir("l2s_model_source_name");
  const fs::path cfg = dir.path / "models--acme--Tiny-1B" / "snapshots" / "c0ffee" / "config.json";
  WriteFile(cfg, Slurp(kHfDir + "/meta-llama--Meta-Llama-3.1-8B.json"));
  paths.hf_hub_cache = dir.path.string();
  const std::string expected =
      "acme/Tiny-1B: the config gives 8.0B parameters, 8.0x the 1B in its name; check "
      "hidden_size, intermediate_size, num_hidden_layers and the expert counts";
  for (const std::string& name : {cfg.string(), std::string("acme/Tiny-1B")}) {
    w.clear();
    ASSERT_TRUE(LoadModelFrom(name, paths, &w).ok()) << name;
    ASSERT_EQ(w.size(), 1u) << name;
    EXPECT_EQ(w[0], expected);
  }
}

}  // namespace
}  // namespace l2s
