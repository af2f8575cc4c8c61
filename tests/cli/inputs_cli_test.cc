// Issue 46 item 5 (safe inputs), end to end through the binary: the exact warning lines (config
// keys and values, the named size, serving without an SLO), --model org/name from the shared
// folder and a temporary HuggingFace cache, a JSON object on every --json exit, --version.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "model/json_fields.h"
#include "run_l2s.h"

namespace {

namespace fs = std::filesystem;
using l2s_cli_test::Result;
using l2s_cli_test::RunL2s;
using l2s_cli_test::Slurp;
using nlohmann::json;

const std::string kHfDir = std::string(L2S_SHARED_DIR) + "/models/hf";

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

json Shipped(const std::string& file) {
  const std::string path = kHfDir + "/" + file;
  auto j = l2s::jsonio::Parse(Slurp(path), path);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : json();
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& stem)
      : path(fs::temp_directory_path() / (stem + "." + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string Write(const std::string& rel, const std::string& text) const {
    const fs::path p = path / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

// The one JSON object a failed --json run prints on stdout.
void ExpectJsonFailure(const Result& r, int code, const std::string& needle) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("l2s: error: ", 0), 0u) << r.err;
  json j;
  ASSERT_NO_THROW(j = json::parse(r.out)) << r.out;
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j.size(), 3u) << r.out;
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["exit_code"], code);
  // The same reason as the stderr line.
  EXPECT_EQ("l2s: error: " + j["reason"].get<std::string>() + "\n", r.err);
  EXPECT_NE(j["reason"].get<std::string>().find(needle), std::string::npos) << r.out;
}

TEST(InputsCli, Version) {
  const Result r = RunL2s({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("l2s 0.1.0", 0), 0u) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_EQ(r.err, "");
}

// `git describe` of the source tree without --dirty, or "" when git does not answer there.
std::string GitDescribe() {
  const std::string cmd =
      std::string("git -C '") + L2S_SOURCE_DIR + "' describe --tags --always 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (::pclose(p) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The version names the commit the binary was built from: it is written at build time, so a
// commit after configuring does not leave --version naming the older one (it did: the text was
// taken once, when cmake configured).
TEST(InputsCli, VersionNamesTheCommitBuilt) {
  const std::string describe = GitDescribe();
  if (describe.empty()) GTEST_SKIP() << "the source tree is not a git checkout git can read";
  const Result r = RunL2s({"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string want = "l2s 0.1.0 (git " + describe;
  EXPECT_EQ(r.out.rfind(want, 0), 0u) << r.out << " (want it to start with " << want
                                      << "; rebuild after committing)";
}

TEST(InputsCli, MisspelledKeyAndBadDtypeWarn) {
  if (!fs::exists(kHfDir)) GTEST_SKIP() << "no " << kHfDir;
  TempDir dir("l2s_inputs_keys");
  json v3 = Shipped("deepseek-ai--DeepSeek-V3.json");
  v3["first_k_dense_replac"] = v3["first_k_dense_replace"];
  v3.erase("first_k_dense_replace");
  const std::string v3_path = dir.Write("v3.json", v3.dump());
  for (const char* cmd : {"describe", "eval"}) {
    std::vector<std::string> args = {cmd, "--model", v3_path};
    if (std::string(cmd) == "eval")
      args.insert(args.end(), {"--gpus", "16", "--strategy", "tp=8,pp=2,dp=1,ep=8", "--json"});
    const Result r = RunL2s(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "l2s: warning: " + v3_path +
                         ": unknown field \"first_k_dense_replac\" (did you mean "
                         "\"first_k_dense_replace\"?); it is ignored\n");
  }
  json l8 = Shipped("meta-llama--Meta-Llama-3.1-8B.json");
  l8["torch_dtype"] = "bfloat61";
  const std::string l8_path = dir.Write("cfg.json", l8.dump());
  const Result r = RunL2s({"describe", "--model", l8_path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "l2s: warning: " + l8_path +
                       ": field \"torch_dtype\": unrecognised value \"bfloat61\" (did you mean "
                       "\"bfloat16\"?; expected one of auto, bfloat16, float16, float32, float64, "
                       "half, float, double, int8, float8_e4m3fn, float8_e5m2); it is ignored\n");
}

// Llama-3.1-8B's shape (8,030,261,248 parameters) under a name that says 1B.
TEST(InputsCli, SizeFarFromTheNameWarns) {
  if (!fs::exists(kHfDir)) GTEST_SKIP() << "no " << kHfDir;
  TempDir dir("l2s_inputs_size");
  const std::string path =
      dir.Write("acme--Tiny-1B.json", Shipped("meta-llama--Meta-Llama-3.1-8B.json").dump());
  const Result r = RunL2s({"describe", "--model", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "l2s: warning: acme--Tiny-1B: the config gives 8.0B parameters, 8.0x the 1B in its "
            "name; check hidden_size, intermediate_size, num_hidden_layers and the expert "
            "counts\n");
  // The shipped configs and the presets load without a word.
  for (const auto& e : fs::directory_iterator(kHfDir)) {
    const Result q = RunL2s({"describe", "--model", e.path().string(), "--json"});
    EXPECT_EQ(q.code, 0) << e.path();
    EXPECT_EQ(q.err, "") << e.path();
  }
  for (const char* preset : {"llama-3.1-70b", "mixtral-8x22b", "qwen3-235b-a22b",
                             "llama-4-maverick", "gpt-moe-1.6t", "gpt-oss-120b"}) {
    const Result q = RunL2s({"describe", "--model", preset, "--json"});
    EXPECT_EQ(q.code, 0) << preset;
    EXPECT_EQ(q.err, "") << preset;
  }
}

// --model org/name: the shared folder (found beside the source tree), then the HF cache.
TEST(InputsCli, RepoIdFromSharedFolderAndHfCache) {
  if (!fs::exists(kHfDir)) GTEST_SKIP() << "no " << kHfDir;
  const Result r1 = RunL2s({"describe", "--model", "deepseek-ai/DeepSeek-R1", "--json"});
  ASSERT_EQ(r1.code, 0) << r1.err;
  EXPECT_EQ(r1.err, "");
  EXPECT_EQ(json::parse(r1.out)["name"], "deepseek-ai/DeepSeek-R1") << r1.out.substr(0, 300);

  TempDir dir("l2s_inputs_hub");
  json tiny = json::parse(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
      "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100})");
  dir.Write("hub/models--acme--Tiny/snapshots/0123abcd/config.json", tiny.dump());
  dir.Write("hub/models--acme--Tiny/refs/main", "0123abcd\n");
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HF_HOME", dir.path.c_str(), 1);  // <HF_HOME>/hub
  const Result r2 = RunL2s({"describe", "--model", "acme/Tiny", "--json"});
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(json::parse(r2.out)["num_layers"], 2) << r2.out.substr(0, 300);
  ::unsetenv("HF_HOME");
  ::setenv("HF_HUB_CACHE", (dir.path / "hub").c_str(), 1);
  const Result r3 = RunL2s({"eval", "--model", "acme/Tiny", "--gpus", "1", "--strategy", "tp=1", "--json"});
  EXPECT_EQ(r3.code, 0) << r3.err;
  EXPECT_EQ(json::parse(r3.out)["valid"], true) << r3.out.substr(0, 300);

  // Not there: one line naming every place looked, and how to fetch it.
  const Result r4 = RunL2s({"describe", "--model", "acme/Nope"});
  ::unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(r4.code, 2);
  EXPECT_EQ(Lines(r4.err), 1) << r4.err;
  EXPECT_NE(r4.err.find("l2s: error: unknown model \"acme/Nope\": not a preset, no such file, and "
                        "no config.json for HuggingFace repo acme/Nope in ../shared/models/hf/"
                        "acme--Nope.json, "),
            std::string::npos)
      << r4.err;
  EXPECT_NE(r4.err.find((dir.path / "hub" / "models--acme--Nope" / "snapshots" / "*" /
                         "config.json")
                            .string() +
                        " (l2s reads local files only: fetch it with `huggingface-cli download "
                        "acme/Nope config.json`); presets: "),
            std::string::npos)
      << r4.err;
}

// A workload beyond the model's max_position_embeddings (Llama-3.1-8B: 131,072) warns once, in
// every command that builds the problem; within it, nothing.
TEST(InputsCli, AContextBeyondTheModelsWarns) {
  const std::string want =
      "l2s: warning: llama-3.1-8b: the workload's sequences reach 201000 tokens, beyond its "
      "max_position_embeddings 131072: the model was not trained for them, and vLLM and SGLang "
      "start only with their override variable (the launch commands set it)\n";
  const Result plan = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                              "--isl", "200000", "--osl", "1000", "--slo",
                              "ttft_ms=60000,tpot_ms=100", "--engine", "vllm", "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_EQ(plan.err, want);
  const Result eval = RunL2s({"eval", "--model", "llama-3.1-8b", "--gpus", "1", "--mode",
                              "decode", "--context", "201000", "--strategy", "tp=1"});
  EXPECT_EQ(eval.err, want);
  const Result within = RunL2s({"eval", "--model", "llama-3.1-8b", "--gpus", "1", "--mode",
                                "decode", "--context", "131072", "--strategy", "tp=1"});
  EXPECT_EQ(within.err, "");
}

TEST(InputsCli, ServingWithoutSloWarnsWithThePlansLatency) {
  for (const char* serving : {"agg", "disagg"}) {
    SCOPED_TRACE(serving);
    const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                             "--serving", serving, "--budget", "100", "--no-baselines", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json best = json::parse(r.out)["best"];
    EXPECT_EQ(r.err, fmt::format("l2s: warning: serving without --slo: the plan maximises tokens/s "
                                 "per GPU whatever its latency: TTFT {:.1f} ms, TPOT {:.2f} ms; "
                                 "bound them with --slo ttft_ms=X,tpot_ms=Y\n",
                                 best["ttft_ms"].get<double>(), best["tpot_ms"].get<double>()));
  }
  // With an SLO, or in decode mode: no warning.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--mode", "serve", "--slo", "ttft_ms=5000"},
        std::vector<std::string>{"--mode", "decode"}}) {
    std::vector<std::string> args = {"plan", "--model", "llama-3.1-8b", "--gpus", "8",
                                     "--budget", "100", "--no-baselines"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = RunL2s(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
  }
}

// An unknown flag is named with the command it was given to and, within a misspelling, the
// command's nearest flag; a command's flag given without its command says where it belongs.
TEST(InputsCli, UnknownFlagSaysWhichFlagWasMeant) {
  const Result typo = RunL2s({"capacity", "--model", "llama-3.1-8b", "--slos", "p99_ttft_ms=1"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err,
            "l2s: error: unknown flag --slos for `l2s capacity` (did you mean --slo?); "
            "`l2s capacity --help` lists its flags\n");
  const Result eq = RunL2s({"eval", "--model", "llama-3.1-8b", "--enigne=vllm"});
  EXPECT_EQ(eq.err,
            "l2s: error: unknown flag --enigne for `l2s eval` (did you mean --engine?); "
            "`l2s eval --help` lists its flags\n");
  // Other tools' names for a flag the command has: the engines' benchmark clients' lengths and
  // rate, their servers' parallel sizes (a command without --strategy gets no suggestion).
  for (const auto& [cmd, given, meant] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"plan", "--input-len", "--isl"},
           {"plan", "--random-output-len", "--osl"},
           {"capacity", "--request-rate", "--rate"},
           {"capacity", "--num-prompts", "--requests"},
           {"eval", "--tensor-parallel-size", "--strategy"},
           {"plan", "--max-num-seqs", "--max-batch"},
           {"plan", "--kv-cache-dtype", "--kv-dtype"}}) {
    const Result r = RunL2s({cmd, "--model", "llama-3.1-8b", given, "4"});
    EXPECT_EQ(r.code, 2) << given;
    EXPECT_EQ(r.err, fmt::format("l2s: error: unknown flag {} for `l2s {}` (did you mean {}?); "
                                 "`l2s {} --help` lists its flags\n",
                                 given, cmd, meant, cmd));
  }
  EXPECT_EQ(RunL2s({"plan", "--model", "llama-3.1-8b", "--tensor-parallel-size", "4"}).err,
            "l2s: error: unknown flag --tensor-parallel-size for `l2s plan`; `l2s plan --help` "
            "lists its flags\n");
  const Result none = RunL2s({"plan", "--model", "llama-3.1-8b", "--nosuch", "3"});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err,
            "l2s: error: unknown flag --nosuch for `l2s plan`; `l2s plan --help` lists its flags\n");
  const Result top = RunL2s({"--gpus", "8"});
  EXPECT_EQ(top.code, 2);
  EXPECT_EQ(top.err,
            "l2s: error: --gpus needs a command before it, e.g. `l2s plan --gpus ...` (`l2s --help` "
            "lists the commands)\n");
  // A stray word says it is one (not CLI11's "The following argument was not expected"); after a
  // switch, that the switch takes no value.
  const Result extra = RunL2s({"plan", "--model", "llama-3.1-8b", "extra"});
  EXPECT_EQ(extra.code, 2);
  EXPECT_EQ(extra.err,
            "l2s: error: unexpected argument \"extra\": every value follows its flag (e.g. --model "
            "NAME); `l2s plan --help` lists the flags\n");
  const Result sw = RunL2s({"plan", "--model", "llama-3.1-8b", "--pareto", "1", "--gpus", "8"});
  EXPECT_EQ(sw.code, 2);
  EXPECT_EQ(sw.err,
            "l2s: error: --pareto takes no value, got \"1\" after it (a switch: give it alone)\n");
  // A first word that is no command names the commands (before any flag it would have taken).
  const Result cmd = RunL2s({"pln", "--gpus", "8"});
  EXPECT_EQ(cmd.code, 2);
  EXPECT_EQ(cmd.err,
            "l2s: error: unknown command \"pln\" (did you mean plan?); the commands: describe, "
            "space, explain, eval, validate, plan, compare, capacity, sweep\n");
  const Result js = RunL2s({"eval", "--json", "yes"});
  EXPECT_EQ(js.code, 2);
  EXPECT_NE(js.out.find("\"reason\": \"--json takes no value, got \\\"yes\\\" after it"),
            std::string::npos)
      << js.out;
}

// A value a flag cannot take says what the flag expects, not CLI11's "Value 1.5 not in range 1 to
// 100000000" (1.5 is in that range; it is not a whole number) or "Could not convert: --rate = fast".
TEST(InputsCli, BadValuesSayWhatTheFlagExpects) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"plan", "--isl", "2k"}, "--isl expects a whole number from 1 to 16777216, got \"2k\""},
      {{"plan", "--budget", "1.5"},
       "--budget expects a whole number from 1 to 100000000, got \"1.5\""},
      {{"plan", "--gpus", "0"}, "--gpus must be from 1 to 16777216, got 0"},
      {{"plan", "--price-per-gpu-hour", "abc"},
       "--price-per-gpu-hour expects a number from 0 to 1000000, got \"abc\""},
      {{"capacity", "--model", "llama-3.1-8b", "--rate", "fast"},
       "--rate expects a number from 0 to 1000000, got \"fast\""},
      {{"capacity", "--model", "llama-3.1-8b", "--burstiness", "fast"},
       "--burstiness expects a number, got \"fast\""},
      // A flag's missing value is not the next flag (CLI11 would take "--budget" as the model
      // id, or silently drop --json as the router).
      {{"plan", "--model-id", "--budget", "50"},
       "--model-id expects a value, got the flag --budget (give --model-id a value, or drop it)"},
      {{"capacity", "--model", "llama-3.1-8b", "--router", "--rate", "2"},
       "--router expects a value, got the flag --rate (give --router a value, or drop it)"},
      // ... nor is the end of the line (CLI11: "--budget: 1 required INT:INT in [1 - 100000000]
      // missing").
      {{"plan", "--model", "llama-3.1-8b", "--budget"}, "--budget expects a value, got none after it"},
      {{"capacity", "--slo"}, "--slo expects a value, got none after it"},
      // An empty value is not "not given" (`--model "$MODEL"` with MODEL unset planned the
      // default model, gpt-moe-1.6t; `--gpu ""` ran on h100).
      {{"plan", "--model", "", "--gpus", "8"},
       "--model expects a value, got an empty string (drop --model for its default)"},
      {{"capacity", "--model", "llama-3.1-8b", "--gpu=", "--strategy", "tp=1", "--rate", "1"},
       "--gpu expects a value, got an empty string (drop --gpu for its default)"},
      {{"eval", "--model", "llama-3.1-8b", "--strategy", "tp=8", "--engine", ""},
       "--engine expects a value, got an empty string (drop --engine for its default)"},
      // A flag given twice (CLI11 says "At Most 1 required but received 2").
      {{"plan", "--budget", "100", "--search", "oracle", "--budget", "50"},
       "--budget is given 2 times: give it once"},
      {{"capacity", "--model", "llama-3.1-8b", "--rate", "2", "--rate", "3", "--rate", "4"},
       "--rate is given 3 times: give it once"},
  };
  for (const auto& [args, line] : cases) {
    const Result r = RunL2s(args);
    EXPECT_EQ(r.code, 2) << line;
    EXPECT_EQ(r.err, "l2s: error: " + line + "\n");
  }
}

// The hardware comparison (`plan --gpu a,b`): a flag every GPU type's plan rejects is one error,
// as `l2s plan` gives it (not a table of identical rows); a GPU type listed twice is refused; a
// reason of one GPU type alone (an engine without a build for it) stays that type's row.
TEST(InputsCli, HardwareComparisonSaysACommonInputErrorOnce) {
  const Result bad = RunL2s({"plan", "--gpu", "h100,h200", "--gpus", "abc"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(bad.out.empty()) << bad.out;
  EXPECT_EQ(bad.err, "l2s: error: --gpus expects a whole number from 1 to 16777216, got \"abc\"\n");
  // A usage error is found before any GPU type runs (no progress lines; with --pareto they were
  // printed for every type first) and said in the user's arguments: the children's added --json
  // made a last flag without its value "--budget expects a value, got the flag --json".
  const std::vector<std::pair<std::vector<std::string>, std::string>> usage = {
      {{"plan", "--gpu", "h100,h200", "--gpus", "8", "--budget"},
       "--budget expects a value, got none after it"},
      {{"plan", "--gpu", "h100,h200", "--gpus", "8", "--mode", "serve", "--pareto", "hw.svg"},
       "--pareto takes no value, got \"hw.svg\" after it (a switch: give it alone)"},
      {{"capacity", "--model", "llama-3.1-8b", "--gpu=h100,h200", "--price-per-gpu-hour=2,3",
        "--rate", "5", "--slo", "p99_ttft_ms=2000", "--bogus"},
       "unknown flag --bogus for `l2s capacity`; `l2s capacity --help` lists its flags"},
  };
  for (const auto& [args, line] : usage) {
    const Result r = RunL2s(args);
    EXPECT_EQ(r.code, 2) << line;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err, "l2s: error: " + line + "\n");
  }
  const Result twice = RunL2s({"plan", "--gpu", "h100,h100", "--gpus", "8"});
  EXPECT_EQ(twice.code, 2);
  EXPECT_EQ(twice.err, "l2s: error: --gpu h100,h100: h100 is listed twice (one row per GPU type)\n");
  const Result one = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpu", "h100,mi300x", "--gpus",
                             "8", "--engine", "trtllm", "--budget", "100"});
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.out.find("  mi300x   no valid plan: --engine: TensorRT-LLM does not run on AMD GPUs"),
            std::string::npos)
      << one.out;
  EXPECT_NE(one.out.find("fastest per GPU: h100"), std::string::npos) << one.out;
  // The exit-2 row is said on one stderr line too (the table holds the others' results).
  EXPECT_EQ(one.err.rfind("l2s: error: mi300x: --engine: TensorRT-LLM does not run on AMD GPUs", 0),
            0u)
      << one.err;
  EXPECT_EQ(one.err.find('\n'), one.err.size() - 1) << one.err;
}

TEST(InputsCli, JsonOnEveryExit) {
  // No fit, and an SLO no strategy meets: exit 1.
  ExpectJsonFailure(RunL2s({"plan", "--model", "llama-3.1-405b", "--gpus", "1", "--budget", "50",
                            "--no-baselines", "--json"}),
                    1, "does not fit on 1 x h100");
  ExpectJsonFailure(RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                            "--slo", "tpot_ms=0.01", "--serving", "agg", "--budget", "100",
                            "--no-baselines", "--json"}),
                    1, "no strategy meets the TPOT SLO of 0.01 ms");
  // A bad flag value (caught while parsing), a missing file: exit 2.
  ExpectJsonFailure(RunL2s({"plan", "--gpus", "abc", "--json"}), 2, "--gpus");
  ExpectJsonFailure(RunL2s({"--json", "plan", "--budget", "0"}), 2, "--budget");
  ExpectJsonFailure(RunL2s({"eval", "--model", "/no/such/config.json", "--gpus", "8", "--json"}),
                    2, "unknown model \"/no/such/config.json\"");
  // Every subcommand that has --json.
  ExpectJsonFailure(RunL2s({"describe", "--model", "no-such", "--json"}), 2, "no-such");
  ExpectJsonFailure(RunL2s({"space", "--model", "no-such", "--gpus", "8", "--json"}), 2,
                    "no-such");
  ExpectJsonFailure(RunL2s({"explain", "--model", "no-such", "--gpus", "8", "--json"}), 2,
                    "no-such");
  ExpectJsonFailure(RunL2s({"compare", "--model", "no-such", "--json"}), 2, "no-such");
  ExpectJsonFailure(RunL2s({"validate", "--measurements", "/no/such.csv", "--json"}), 2,
                    "/no/such.csv");
  // Without --json stdout stays empty.
  const Result r = RunL2s({"plan", "--gpus", "abc"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
}

}  // namespace
