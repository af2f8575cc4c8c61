// End-to-end tests of `l2s eval`, `explain`, `space` and `validate`: run the built binary
// (L2S_BIN) and check exit codes, one-line errors, and the JSON contracts scripts rely on.
// Figures that do not depend on the fitted kernel coefficients (memory, space sizes, exit codes)
// are checked exactly; time-based figures only through invariants.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/dtype.h"
#include "model/counts.h"
#include "model/presets.h"

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

std::string TempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "." + std::to_string(::getpid()) + ".tmp"))
      .string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `l2s <args>` through the shell (args are already quoted as needed).
Result RunL2s(const std::string& args) {
  const std::string err_path = TempPath("l2s_cli_err");
  const std::string cmd = std::string("'") + L2S_BIN + "' " + args + " 2>'" + err_path + "'";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = Slurp(err_path);
  std::filesystem::remove(err_path);
  return r;
}

int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A usage error: exit 2, nothing on stdout, exactly one line on stderr.
void ExpectUsageError(const std::string& args, const std::string& needle = "") {
  SCOPED_TRACE(args);
  const Result r = RunL2s(args);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  if (args.find("--json") == std::string::npos) {
    EXPECT_TRUE(r.out.empty()) << r.out;
  } else {  // --json: the error as one JSON object on stdout (issue 46)
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["valid"], false);
    EXPECT_EQ(j["exit_code"], 2);
    EXPECT_EQ("l2s: error: " + j["reason"].get<std::string>() + "\n", r.err);
  }
  if (!needle.empty()) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
}

nlohmann::json ParseJson(const std::string& s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << s;
  return j;
}

const char* kLlama8b = "eval --model llama-3.1-8b --gpu h100 --gpus 8 ";

TEST(EvalCli, JsonHasTheContractFields) {
  const Result r = RunL2s(std::string(kLlama8b) + "--strategy tp=8 --mode decode --context 2048 --json");
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_TRUE(j.is_object());
  for (const char* k : {"valid", "reason", "tokens_per_s", "tokens_per_s_per_gpu", "ttft_ms",
                        "tpot_ms", "batch", "memory_per_gpu_gib", "breakdown", "strategy", "model",
                        "gpu", "gpus", "mode"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"step_ms", "by_operator", "by_collective", "memory_gib"})
    EXPECT_TRUE(j["breakdown"].contains(k)) << k;
  for (const char* k : {"weights", "kv", "activations", "reserve"})
    EXPECT_TRUE(j["breakdown"]["memory_gib"].contains(k)) << k;
  // Exit code agrees with the verdict.
  EXPECT_EQ(r.code, j["valid"].get<bool>() ? 0 : 1);
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["gpu"], "h100");
  EXPECT_EQ(j["mode"], "decode");
  // Canonical text: dp filled in as GPUs/(pp*tp) = 1, Megatron dims, MoE dims cleared on a dense
  // model.
  const std::string s = j["strategy"];
  EXPECT_NE(s.find("pp=1,tp=8,dp=1,ep=1,batch=auto,sp=off,embed=dim0,attn_qkv=dim1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("moe_ffn1=none"), std::string::npos) << s;
  // Weights per GPU under tp=8 Megatron: every matrix (embedding and lm_head vocab-parallel
  // included) is split 8 ways; only norms (~0.27M params) are replicated. So the weight memory is
  // bf16 bytes / 8 within 0.1%.
  const l2s::ModelSpec m = *l2s::ModelPreset("llama-3.1-8b");
  const double expect_gib = l2s::WeightBytes(m, l2s::DType::kBF16) / 8 / l2s::kGiB;
  EXPECT_NEAR(j["breakdown"]["memory_gib"]["weights"].get<double>(), expect_gib, 1e-3 * expect_gib);
  // The parts add up to the total.
  const auto& mem = j["breakdown"]["memory_gib"];
  EXPECT_NEAR(mem["weights"].get<double>() + mem["kv"].get<double>() +
                  mem["activations"].get<double>() + mem["reserve"].get<double>(),
              j["memory_per_gpu_gib"].get<double>(), 1e-6);
  if (j["tokens_per_s"].is_number() && j["tokens_per_s_per_gpu"].is_number()) {
    EXPECT_NEAR(j["tokens_per_s_per_gpu"].get<double>() * 8, j["tokens_per_s"].get<double>(),
                1e-6 * std::max(1.0, j["tokens_per_s"].get<double>()));
  }
}

TEST(EvalCli, EngineFactorScalesEveryStep) {
  // --engine E runs every step 1 / factor as long (Workload::engine_factor): throughput x factor,
  // TPOT / factor, memory unchanged; one run's throughput and TPOT stay consistent.
  const std::string base = std::string(kLlama8b) + "--strategy tp=8 --mode decode --batch 16 --json";
  const nlohmann::json a = ParseJson(RunL2s(base).out);
  const nlohmann::json b = ParseJson(RunL2s(base + " --engine trtllm-1.1").out);
  ASSERT_TRUE(a.is_object() && b.is_object());
  EXPECT_EQ(a["engine_factor"], 1.0);
  const double f = b["engine_factor"];
  EXPECT_GT(f, 0.0);
  if (a["tokens_per_s"].is_number() && b["tokens_per_s"].is_number()) {
    EXPECT_NEAR(b["tokens_per_s"].get<double>(), f * a["tokens_per_s"].get<double>(),
                1e-9 * std::max(1.0, b["tokens_per_s"].get<double>()));
  }
  EXPECT_NEAR(b["tpot_ms"].get<double>(), a["tpot_ms"].get<double>() / f,
              1e-9 * b["tpot_ms"].get<double>());
  EXPECT_EQ(a["memory_per_gpu_gib"], b["memory_per_gpu_gib"]);
  EXPECT_EQ(a["batch"], 16);
}

// One computation, one price: `--gpu gb200 --gpus N` is N GPUs in the GB200's own NVLink domain
// of 72, as `--cluster gb200-N` and `--cluster gb200-nvl72 --gpus N` are (it used to build 8-GPU
// domains, so the same expert all-to-all crossed the scale-out network). --gpus-per-node 8 still
// asks for 8-GPU domains, and pays for it.
TEST(EvalCli, AGpuTypeBringsItsOwnNvlinkDomain) {
  const std::string tail =
      " --model qwen3-30b-a3b --mode serve --isl 1024 --osl 256 --strategy dp=16,ep=16,batch=64 --json";
  auto tps = [&](const std::string& cluster) {
    const Result r = RunL2s("eval " + cluster + tail);
    EXPECT_EQ(r.code, 0) << cluster << ": " << r.err;
    return ParseJson(r.out)["tokens_per_s_per_gpu"].get<double>();
  };
  const double flag = tps("--gpu gb200 --gpus 16");
  EXPECT_EQ(flag, tps("--cluster gb200-16"));
  EXPECT_EQ(flag, tps("--cluster gb200-nvl72 --gpus 16"));
  EXPECT_LT(tps("--gpu gb200 --gpus 16 --gpus-per-node 8"), flag * 0.95);
  // --nodes counts the GPU's domains: two NVL72 racks.
  const Result n = RunL2s("describe --gpu gb200 --gpus 144 --json");
  ASSERT_EQ(n.code, 0) << n.err;
  EXPECT_EQ(ParseJson(n.out)["gpus_per_domain"], 72) << n.out;
  const Result d = RunL2s("eval --gpu gb200 --nodes 2" + tail);
  EXPECT_NE(d.code, 0);  // 144 GPUs cannot run dp=16: the size is the racks', not 2 x 8
  EXPECT_NE(d.err.find("144"), std::string::npos) << d.err;
}

TEST(EvalCli, InvalidStrategyIsValidFalseWithExit1) {
  // ep=2 on a dense model: structurally invalid.
  {
    const Result r = RunL2s(std::string(kLlama8b) + "--strategy tp=8,ep=2 --json");
    EXPECT_EQ(r.code, 1);
    const nlohmann::json j = ParseJson(r.out);
    EXPECT_EQ(j["valid"], false);
    EXPECT_NE(j["reason"].get<std::string>().find("ep=2"), std::string::npos) << j["reason"];
  }
  // tp=3 does not divide Llama's 32 heads (6 GPUs, dp = 2).
  {
    const Result r = RunL2s("eval --model llama-3.1-8b --gpus 6 --strategy tp=3 --json");
    EXPECT_EQ(r.code, 1);
    const nlohmann::json j = ParseJson(r.out);
    EXPECT_EQ(j["valid"], false);
    EXPECT_NE(j["reason"].get<std::string>().find("heads"), std::string::npos) << j["reason"];
  }
  // Llama 3.1 405B in bf16 (~756 GiB of weights) on one 80 GiB GPU: out of memory at any batch.
  {
    const Result r = RunL2s("eval --model llama-3.1-405b --gpus 1 --strategy tp=1 --json");
    EXPECT_EQ(r.code, 1);
    const nlohmann::json j = ParseJson(r.out);
    EXPECT_EQ(j["valid"], false);
    EXPECT_NE(j["reason"].get<std::string>().find("GiB"), std::string::npos) << j["reason"];
    EXPECT_GT(j["breakdown"]["memory_gib"]["weights"].get<double>(), 700.0);
  }
  // Table mode: the reason alone, one line on stderr.
  {
    const Result r = RunL2s("eval --model llama-3.1-405b --gpus 1 --strategy tp=1");
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
  }
}

TEST(EvalCli, SloViolationIsInvalid) {
  // A TPOT limit of 1 microsecond cannot be met by any batch.
  const Result r = RunL2s(std::string(kLlama8b) +
                       "--strategy tp=8 --mode decode --slo tpot_ms=0.001 --json");
  const nlohmann::json j = ParseJson(r.out);
  if (!j["tpot_ms"].is_number() || !(j["tpot_ms"].get<double>() > 0))
    GTEST_SKIP() << "kernel coefficients not fitted yet";
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(j["valid"], false);
  EXPECT_NE(j["reason"].get<std::string>().find("TPOT"), std::string::npos) << j["reason"];
}

TEST(EvalCli, UsageErrorsAreOneLineExit2) {
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --no-such-flag");
  ExpectUsageError("eval --model no-such-model --gpus 8 --strategy tp=8", "llama-3.1-8b");
  ExpectUsageError("eval --model /nonexistent/dir/config.json --gpus 8 --strategy tp=8");
  ExpectUsageError(std::string(kLlama8b) + "--strategy 'tp=8,,pp=1'");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=abc", "tp");
  ExpectUsageError(std::string(kLlama8b) + "--strategy bogus=1", "bogus");
  ExpectUsageError("eval --model llama-3.1-8b --gpus 0 --strategy tp=1");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=3", "divide");      // 3 does not divide 8
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=4,dp=4", "GPUs");   // 16 != 8
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --slo ttft_ms=abc", "--slo");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --slo speed=3", "--slo");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --batch many", "--batch");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --mode train", "--mode");
  ExpectUsageError(std::string(kLlama8b) + "--strategy tp=8 --gpu z900");
  ExpectUsageError(std::string(kLlama8b));  // --strategy missing
}

TEST(ExplainCli, JsonListsEveryLayerOnce) {
  const Result r = RunL2s("explain --model mixtral-8x7b --gpus 8 --strategy tp=8,ep=8 --mode decode "
                       "--context 4096 --batch 32 --json");
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(r.code, j["valid"].get<bool>() ? 0 : 1);
  ASSERT_TRUE(j["layer_kinds"].is_array());
  int layers = 0;
  bool dispatch = false, moe_all_reduce = false;
  for (const auto& k : j["layer_kinds"]) {
    layers += k["layers"].get<int>();
    EXPECT_EQ(k["layers"], k["layers_in_slowest_stage"]);  // pp = 1
    for (const auto& st : k["steps"]) {
      EXPECT_TRUE(st.contains("time_us"));
      if (st["kind"] == "collective") {
        EXPECT_TRUE(st.contains("group_size"));
        EXPECT_TRUE(st.contains("bytes"));
        EXPECT_EQ(st["crosses_nvlink"], false);  // 8 GPUs = one HGX node
        dispatch |= st["collective"] == "moe-dispatch";
        moe_all_reduce |= st["collective"] == "all-reduce" && st["op"] == "moe_ffn2";
      }
      if (st["kind"] == "gemm" && st["op"] == "attn_qkv" && st["what"] == "qkv") {
        // Mixtral: hidden 4096, 32 heads + 2 x 8 KV heads of 128, split 8 ways on N (dim1):
        // per GPU n = (32 + 16) * 128 / 8 = 768, k = 4096, m = batch = 32.
        EXPECT_EQ(st["m"], 32.0);
        EXPECT_EQ(st["n"], 768.0);
        EXPECT_EQ(st["k"], 4096.0);
      }
    }
  }
  EXPECT_EQ(layers, 32);  // Mixtral 8x7B has 32 layers
  // dp = 1: every GPU holds every token, so the ep = 8 ranks run their own experts' copies and
  // the MoE block ends in one all-reduce, with no dispatch / combine (engines' EP without
  // attention data parallelism).
  EXPECT_FALSE(dispatch);
  EXPECT_TRUE(moe_all_reduce);
  for (const char* k : {"embed", "lm_head", "pipeline", "totals", "why"}) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["batch"], 32);
}

// explain --engine names the engine its totals run under, as eval does (it said "none (ideal
// engine, factor 1)" beside figures priced with SGLang's factor).
TEST(ExplainCli, TotalsNameTheEngineAsEvalDoes) {
  const std::string args = "--model deepseek-v3 --gpus 8 --gpu h200 --mode decode --context 4096 "
                           "--engine sglang --strategy tp=8,ep=8 --json";
  const Result ex = RunL2s("explain " + args), ev = RunL2s("eval " + args);
  ASSERT_EQ(ex.code, 0) << ex.err;
  ASSERT_EQ(ev.code, 0) << ev.err;
  const auto t = nlohmann::json::parse(ex.out).at("totals");
  const auto e = nlohmann::json::parse(ev.out);
  EXPECT_EQ(t.at("engine"), "sglang");
  EXPECT_EQ(t.at("engine"), e.at("engine"));
  EXPECT_EQ(t.at("engine_factor"), e.at("engine_factor"));
  EXPECT_LT(t.at("engine_factor").get<double>(), 1.0);
  EXPECT_EQ(t.at("tpot_ms"), e.at("tpot_ms"));
}

// eval --engine E of a strategy E does not launch as given: priced under E all the same, and
// says what E cannot run (JSON launchable / unlaunchable; the text's "launch" lines); a strategy
// E launches is launchable, and without --engine launchable is null.
TEST(EvalCli, SaysWhatTheEngineDoesNotLaunch) {
  const std::string problem = "--model qwen3-30b-a3b --gpus 8 --mode serve --isl 1024 --osl 256 ";
  const Result bad =
      RunL2s("eval " + problem + "--engine vllm --strategy tp=2,dp=4,ep=4,sp=on --json");
  ASSERT_EQ(bad.code, 0) << bad.err;
  const auto b = nlohmann::json::parse(bad.out);
  EXPECT_EQ(b.at("launchable"), false);
  ASSERT_EQ(b.at("unlaunchable").size(), 2u) << bad.out;
  EXPECT_EQ(b.at("unlaunchable")[0].get<std::string>().rfind("sp=on", 0), 0u);
  EXPECT_EQ(b.at("unlaunchable")[1].get<std::string>().rfind("ep=4", 0), 0u);
  const Result text = RunL2s("eval " + problem + "--engine vllm --strategy tp=2,dp=4,ep=4,sp=on");
  EXPECT_NE(text.out.find("launch       vLLM does not run this as given: ep=4"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("launch       `l2s plan --engine vllm` plans what it launches"),
            std::string::npos);
  const Result ok = RunL2s("eval " + problem + "--engine vllm --strategy tp=2,dp=4,ep=8 --json");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("launchable"), true);
  EXPECT_TRUE(nlohmann::json::parse(ok.out).at("unlaunchable").empty());
  const Result none = RunL2s("eval " + problem + "--strategy tp=2,dp=4,ep=4,sp=on --json");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(nlohmann::json::parse(none.out).at("launchable").is_null());
  // capacity of a given layout says the same.
  const Result cap =
      RunL2s("capacity --model qwen3-30b-a3b --gpu h100 --engine vllm --strategy "
             "tp=2,dp=4,ep=4,sp=on --rate 5 --requests 100 --isl 1024 --osl 256 --json");
  ASSERT_EQ(cap.code, 0) << cap.err;
  EXPECT_EQ(nlohmann::json::parse(cap.out).at("unlaunchable"), b.at("unlaunchable"));
}

TEST(ExplainCli, TextHasSectionsAndWhy) {
  const Result r = RunL2s("explain --model llama-3.1-8b --gpus 8 --strategy tp=4,pp=2 --mode decode "
                       "--batch 8");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_NE(r.out.find("== layer kind 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== embed"), std::string::npos);
  EXPECT_NE(r.out.find("== lm_head"), std::string::npos);
  EXPECT_NE(r.out.find("== pipeline"), std::string::npos);
  EXPECT_NE(r.out.find("send/recv"), std::string::npos);  // pp = 2 has a stage boundary
  EXPECT_NE(r.out.find("16 in the slowest stage"), std::string::npos);  // 32 layers / 2 stages
}

// Under two-batch overlap the "why" sentence names what the step shows, as the breakdown does:
// gpt-moe-1.6t's SGLang plan (README) hides its expert-TP all-gather under the other half's
// compute, so the sentence's first share is attention's share of the step (it counted the hidden
// all-gather and halved every share: "attention (34%), then all-gather ... (13%)").
TEST(EvalCli, WhyCountsWhatTheStepShows) {
  const std::string strategy =
      "pp=2,tp=32,dp=16,ep=8,batch=38,sp=off,overlap=tbo,embed=dim0,attn_qkv=dim1,attn_core=dim0,"
      "attn_out=dim0,moe_router=none,moe_ffn1=dim1,moe_ffn2=dim0,shared_ffn1=none,shared_ffn2=none,"
      "dense_ffn1=none,dense_ffn2=none,lm_head=dim1";
  for (const char* overlap : {"tbo", "none"}) {
    std::string s = strategy;
    s.replace(s.find("overlap=tbo"), 11, std::string("overlap=") + overlap);
    const Result r = RunL2s("eval --model gpt-moe-1.6t --gpus 1024 --mode decode --context 16384 "
                            "--engine sglang --json --strategy " + s);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const std::string why = j.at("why");
    const std::string head = "decode is dominated by attention over the KV cache (";
    ASSERT_EQ(why.rfind(head, 0), 0u) << why;
    const double pct = std::stod(why.substr(head.size()));
    const auto& bd = j.at("breakdown");
    const double attn = bd.at("by_operator").at("attn_core").at("compute_ms").get<double>();
    EXPECT_NEAR(pct, 100.0 * attn / bd.at("step_ms").get<double>(), 1.0) << overlap << ": " << why;
    if (std::string(overlap) == "tbo") {
      EXPECT_EQ(bd.at("by_collective").count("all-gather"), 0u) << bd.dump();
      EXPECT_EQ(why.find("all-gather"), std::string::npos) << why;
    }
  }
  // Serve mode with attention-DP imbalance (SGLang places whole prompts on ranks): the step is
  // the imbalanced rank's, whose MoE dispatch/combine the table shows at its share (the sentence
  // priced the even step: "the expert matmuls (48%)").
  const Result r = RunL2s("eval --model deepseek-v3 --gpu h200 --gpus 16 --mode serve --isl 2048 "
                          "--osl 512 --engine sglang --json --strategy tp=1,dp=16,ep=16,batch=64");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string why = j.at("why");
  const std::string head =
      "the serving step (decode plus chunked prefill) is dominated by MoE token dispatch/combine "
      "over the stage's 16 GPUs across NVLink domains (";
  ASSERT_EQ(why.rfind(head, 0), 0u) << why;
  const auto& bd = j.at("breakdown");
  ASSERT_GT(j.at("scheduler").at("adp_imbalance").get<double>(), 1.5) << r.out;
  EXPECT_NEAR(std::stod(why.substr(head.size())),
              100.0 * bd.at("comm_ms").get<double>() / bd.at("step_ms").get<double>(), 1.0)
      << why;
}

TEST(SpaceCli, HandCountedSizes) {
  // Llama 3.1 8B (32 layers, 32 heads, dense) on 8 GPUs, batch options 1..16:
  //   pp in {1,2,4,8}, tp in {1,2,4,8}, ep in {1}, batch 1,2,4,8,16 (5), sp (2), and the 7
  //   operators a dense model has (embed, attn_qkv, attn_core, attn_out, dense_ffn1, dense_ffn2,
  //   lm_head) with 3 dims each: size = 4 * 4 * 1 * 5 * 2 * 3^7 = 349,920.
  //   Valid (pp, tp) pairs: tp | 8/pp -> pp=1: 4, pp=2: 3, pp=4: 2, pp=8: 1 = 10 pairs:
  //   valid = 10 * 5 * 2 * 3^7 = 218,700.
  const Result r = RunL2s("space --model llama-3.1-8b --gpu h100 --gpus 8 --max-batch 16 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["size"].get<double>(), 349920.0);
  EXPECT_EQ(j["valid"].get<double>(), 218700.0);
  ASSERT_TRUE(j["heads"].is_array());
  EXPECT_EQ(j["heads"].size(), 5u + 7u);
  EXPECT_EQ(j["heads"][0]["name"], "pp");
  EXPECT_EQ(j["heads"][3]["options"].size(), 5u);
  ExpectUsageError("space --model llama-3.1-8b --gpu h100 --gpus 0");
  // --engine vllm: the space plan --engine vllm searches - Megatron's dims only (each operator
  // head one option) and sp off: size = 4 * 4 * 1 * 5 = 80, valid = 10 pairs * 5 = 50.
  const Result v =
      RunL2s("space --model llama-3.1-8b --gpu h100 --gpus 8 --max-batch 16 --engine vllm --json");
  EXPECT_EQ(v.code, 0) << v.err;
  const nlohmann::json vj = ParseJson(v.out);
  EXPECT_EQ(vj["size"].get<double>(), 80.0);
  EXPECT_EQ(vj["valid"].get<double>(), 50.0);
  EXPECT_EQ(vj["engine"], "vllm");
  EXPECT_EQ(vj["engine_rules"], "Megatron's dims only");
  EXPECT_EQ(j["engine"], "ideal");
  EXPECT_EQ(j["engine_rules"], "");
  const Result t =
      RunL2s("space --model llama-3.1-8b --gpu h100 --gpus 8 --max-batch 16 --engine vllm");
  EXPECT_NE(t.out.find("engine            vllm: the space it launches (Megatron's dims only)\n"),
            std::string::npos)
      << t.out;
}

TEST(SpaceCli, PaperScaleGptMoe) {
  // gpt-moe-1.6t (80 layers, 96 heads, 16 experts, all layers MoE) on 24,576 = 2^13 * 3 GPUs:
  // pp: divisors <= 80 -> 1 2 3 4 6 8 12 16 24 32 48 64 (12); tp: divisors of 96 -> 12; ep:
  // divisors of 16 -> 5; batch 1..1024 -> 11; sp 2; 8 operators x 3 dims.
  // size = 12*12*5*11*2*3^8 = 103,926,240. Valid: pp a multiple of 3 (5 of the 12) leaves a
  // stage of 2^k GPUs that the 6 tp options with a factor 3 do not divide; every ep divides:
  // (7*12 + 5*6) * 5 = 570 of 720 triples -> 570/720 * 103,926,240 = 82,274,940.
  // Wide-EP heads: slots {experts} (16 experts get no redundant slots) and overlap {none, tbo,
  // sbo} triple the size to 311,778,720; tbo/sbo need ep > 1, so each (pp, tp) counts
  // 1 + 4*3 = 13 (ep, overlap) pairs instead of 5: 82,274,940 * 13/5 = 213,914,844 valid.
  const Result r = RunL2s("space --model gpt-moe-1.6t --gpu h100 --gpus 24576 --json");
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["size"].get<double>(), 311778720.0);
  EXPECT_EQ(j["valid"].get<double>(), 213914844.0);
}

// ---------------------------------------------------------------- validate

std::string SharedDir() { return L2S_SHARED_DIR; }

TEST(ValidateCli, SharedMeasurementsSummary) {
  const std::string csv = SharedDir() + "/reference/measurements.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  const Result r = RunL2s("validate --measurements '" + csv + "' --models-dir '" + SharedDir() +
                       "/models/hf' --json");
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  for (const char* k : {"rows", "median_abs_pct_error", "share_within_25pct", "spearman"})
    EXPECT_TRUE(j.contains(k)) << k;
  ASSERT_TRUE(j["rows"].is_array());
  // Every data row of the file is reported (none skipped).
  int data_lines = -1;  // minus the header
  std::istringstream in(Slurp(csv));
  for (std::string line; std::getline(in, line);) data_lines += !line.empty();
  EXPECT_EQ(static_cast<int>(j["rows"].size()), data_lines);
  for (const auto& row : j["rows"]) {
    for (const char* k : {"id", "predicted", "measured", "error_pct", "status"})
      EXPECT_TRUE(row.contains(k)) << k;
    EXPECT_TRUE(row["status"] == "ok" || row["status"] == "miss");
  }
  const double share = j["share_within_25pct"];
  EXPECT_GE(share, 0.0);
  EXPECT_LE(share, 1.0);
  // The text form prints the same summary.
  const Result t = RunL2s("validate --measurements '" + csv + "' --models-dir '" + SharedDir() +
                       "/models/hf'");
  EXPECT_EQ(t.code, 0);
  EXPECT_NE(t.out.find("median |error|"), std::string::npos);
  EXPECT_NE(t.out.find("within +/-25%"), std::string::npos);
}

TEST(ValidateCli, MalformedCsvNamesLineAndColumn) {
  const std::string path = TempPath("l2s_bad_measurements");
  {
    std::ofstream out(path);
    out << "id,engine,gpu,gpus,model_config,tp,mode,isl,osl,metric,value\n"
        << "1,\"trt, llm\",h100,1,llama-3.1-8b,1,serve,128,128,output_tokens_per_s,100\n"
        << "2,trtllm,h100,1,llama-3.1-8b,abc,serve,128,128,output_tokens_per_s,100\n";
  }
  const Result r = RunL2s("validate --measurements '" + path + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'tp'"), std::string::npos) << r.err;
  {
    std::ofstream out(path);
    out << "id,engine,gpu,gpus,model_config,tp,mode,isl,osl,metric,value\n"
        << "1,\"unterminated,h100,1,llama-3.1-8b,1,serve,128,128,output_tokens_per_s,100\n";
  }
  const Result q = RunL2s("validate --measurements '" + path + "'");
  EXPECT_EQ(q.code, 2);
  EXPECT_EQ(CountLines(q.err), 1) << q.err;
  EXPECT_NE(q.err.find("line 2"), std::string::npos) << q.err;
  std::filesystem::remove(path);
  ExpectUsageError("validate --measurements /nonexistent/measurements.csv");
}

TEST(ValidateCli, UnpredictableRowsAreMisses) {
  // An unknown GPU and a missing config are reported and scored, not skipped.
  const std::string path = TempPath("l2s_miss_measurements");
  {
    std::ofstream out(path);
    out << "id,engine,gpu,gpus,model_config,tp,mode,isl,osl,metric,value\n"
        << "a,trtllm,z900,1,llama-3.1-8b,1,serve,128,128,output_tokens_per_s,100\n"
        << "b,trtllm,h100,1,no-such-config.json,1,serve,128,128,output_tokens_per_s,100\n";
  }
  const Result r = RunL2s("validate --measurements '" + path + "' --json");
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) EXPECT_EQ(row["status"], "miss");
  EXPECT_NE(j["rows"][0]["reason"].get<std::string>().find("z900"), std::string::npos);
  EXPECT_EQ(j["median_abs_pct_error"], 100.0);
  EXPECT_EQ(j["share_within_25pct"], 0.0);
}

// Each mode reads its own lengths; a length it would ignore is an error naming it, and without
// --mode an output length means serving.
TEST(LengthFlags, ALengthTheModeDoesNotReadIsAnError) {
  const std::string e = "eval --model llama-3.1-8b --gpus 8 --strategy tp=8";
  ExpectUsageError(e + " --isl 1024",
                   "l2s: error: --isl: decode mode (the default) reads --context, the KV length "
                   "per sequence, not prompt and output lengths; give --mode serve for prompts "
                   "and outputs (or --mode prefill for prompts only)");
  ExpectUsageError(e + " --mode decode --osl 64", "l2s: error: --osl: --mode decode reads --context");
  ExpectUsageError(e + " --mode serve --isl 512 --context 4096",
                   "l2s: error: --context: the KV length of --mode decode; --mode serve's follows "
                   "--isl and --osl");
  ExpectUsageError(e + " --mode prefill --isl 512 --osl 8",
                   "l2s: error: --osl: --mode prefill has no outputs");
  ExpectUsageError("plan --model llama-3.1-8b --gpus 8 --isl 512 --json", "--isl");
  const Result r = RunL2s(e + " --isl 1024 --osl 256 --json");  // --osl: serving
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_GT(j["ttft_ms"].get<double>(), 0);  // a prompt was processed: serve mode
}

TEST(EngineAndMtpFlags, PrefillWithMtpIsASpeculatingDeploymentsPrefillServer) {
  // Every prompt token runs once through the MTP module (its extend), whatever the depth: the
  // same figures for --mtp 1 and 3, below those of a server that does not speculate.
  const std::string ds = "eval --model deepseek-v3 --gpu h200 --gpus 8 --mode prefill --isl 4096 "
                         "--strategy tp=1,dp=8,ep=8,batch=2 --json";
  double tps[3], mem[3];
  int i = 0;
  for (const char* k : {" --mtp 0", " --mtp 1", " --mtp 3"}) {
    const Result r = RunL2s(ds + k);
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    tps[i] = j["tokens_per_s"].get<double>();
    mem[i] = j["memory_per_gpu_gib"].get<double>();
    ++i;
  }
  EXPECT_LT(tps[1], tps[0]);
  EXPECT_GT(mem[1], mem[0]);
  EXPECT_EQ(tps[1], tps[2]);
  EXPECT_EQ(mem[1], mem[2]);
  const Result text = RunL2s("eval --model deepseek-v3 --gpu h200 --gpus 8 --mode prefill --isl "
                             "4096 --strategy tp=1,dp=8,ep=8,batch=2 --mtp 2");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("MTP          a prefill server of a speculating deployment (2 draft "
                          "tokens per decode step): every prompt token runs once through the MTP "
                          "module (its extend)"),
            std::string::npos)
      << text.out;
}

TEST(EngineAndMtpFlags, ErrorsNameTheFlag) {
  const std::string llama = "eval --model llama-3.1-8b --gpus 1 --strategy tp=1";
  ExpectUsageError(llama + " --mtp 2", "--mtp 2");                 // no MTP layers
  ExpectUsageError(llama + " --mtp 9", "--mtp");                   // out of range
  ExpectUsageError(llama + " --adp-balance on", "--adp-balance");  // not TensorRT-LLM
  ExpectUsageError(llama + " --engine trtllm --adp-balance maybe", "--adp-balance");
  ExpectUsageError(llama + " --max-num-tokens -5", "--max-num-tokens");
  const std::string ds = "eval --model deepseek-v3 --gpu h200 --gpus 8 --strategy tp=1,dp=8,ep=8";
  ExpectUsageError(ds + " --mtp 1 --mtp-accept 2.5", "--mtp-accept");  // > mtp + 1
  ExpectUsageError(ds + ",mtp=2 --mtp 1", "--mtp 1");  // disagrees with the strategy
  // A stated acceptance the evaluation would ignore: no speculation, or no decode steps.
  ExpectUsageError(ds + " --mtp-accept 2",
                   "l2s: error: --mtp-accept 2: the strategy speculates no tokens (mtp=0); give "
                   "--mtp K or mtp=K in --strategy");
  ExpectUsageError("explain --model deepseek-v3 --gpu h200 --gpus 8 --strategy tp=8,ep=8 "
                   "--mtp-accept 2",
                   "the strategy speculates no tokens");
  ExpectUsageError(ds + " --mode prefill --isl 1024 --mtp-accept 2",
                   "l2s: error: --mtp-accept 2: prefill mode has no decode steps to accept "
                   "drafts in");
  // A batch given twice, or above the engine limit the user states.
  ExpectUsageError(llama + ",batch=16 --batch 32",
                   "l2s: error: --batch 32 disagrees with the strategy's batch=16 (give the batch "
                   "once)");
  ExpectUsageError(llama + " --max-batch 4 --batch 16",
                   "l2s: error: batch 16 exceeds --max-batch 4: the engine runs at most 4 "
                   "sequences per rank");
}

TEST(EngineAndMtpFlags, DraftModelSpeculatesForAModelWithoutMtpLayers) {
  const std::string llama =
      "eval --model llama-3.1-8b --gpus 1 --strategy tp=1,mtp=2 --mode decode --context 2048 "
      "--batch 8";
  const Result none = RunL2s(llama);  // a strategy that cannot run: the error says what would draft
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("--draft-model"), std::string::npos) << none.err;
  ExpectUsageError("eval --model llama-3.1-8b --gpus 1 --strategy tp=1 --mtp 2", "--draft-model");
  ExpectUsageError(llama + " --draft-model 'org/x y'", "--draft-model");  // a shell-split id
  ExpectUsageError(llama + " --draft-model 'org/x\"'", "--draft-model");  // breaks vLLM's JSON
  ExpectUsageError("eval --model deepseek-v3 --gpu h200 --gpus 8 --strategy tp=8,ep=8 "
                   "--draft-model org/x",
                   "MTP layer");  // engines draft with the model's own MTP layers
  const Result r = RunL2s(llama + " --draft-model org/eagle3-draft --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_NE(j["strategy"].get<std::string>().find("mtp=2"), std::string::npos);
  EXPECT_GT(j["breakdown"]["mtp_draft_ms"].get<double>(), 0);
  EXPECT_EQ(j["draft_model"], "org/eagle3-draft");
  const Result t = RunL2s(llama + " --draft-model org/eagle3-draft");
  EXPECT_NE(t.out.find("2 draft tokens per step by org/eagle3-draft"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("--mtp-accept"), std::string::npos) << t.out;  // acceptance unmeasured
  // describe shows the draft's parameters as priced (Simulator.DraftModelPaysItsFusionLayerAnd
  // DraftHead derives them: 424,681,472 + the final norm's 4,096).
  const Result d = RunL2s("describe --model llama-3.1-8b --draft-model org/eagle3-draft --json");
  ASSERT_EQ(d.code, 0) << d.err;
  const nlohmann::json dj = ParseJson(d.out);
  EXPECT_EQ(dj["mtp_params"], 424'685'568);
  EXPECT_EQ(dj["draft_model"], "org/eagle3-draft");
  ExpectUsageError("describe --model deepseek-v3 --draft-model org/x", "MTP layer");
}

TEST(EvalCli, AttnDtypeFp8SpeedsUpComputeBoundMla) {
  // DeepSeek-V3 DEP8 decode on H20 at batch 64 over 4,096 keys: absorbed MLA decode is
  // compute-bound at H20's bf16 peak, so FP8 attention math makes the step faster; the flag shows
  // in the JSON; a bad value or fp8 on a GPU without FP8 tensor cores is a usage error.
  const std::string ds =
      "eval --model deepseek-v3 --gpu h20 --gpus 16 --strategy tp=1,dp=16,ep=16 --batch 64 "
      "--mode decode --context 4096 --kv-dtype fp8 --json";
  const Result bf = RunL2s(ds);
  const Result f8 = RunL2s(ds + " --attn-dtype fp8");
  ASSERT_EQ(bf.code, 0) << bf.err;
  ASSERT_EQ(f8.code, 0) << f8.err;
  const nlohmann::json jb = ParseJson(bf.out), j8 = ParseJson(f8.out);
  EXPECT_EQ(jb["attn_dtype"], "bf16");
  EXPECT_EQ(j8["attn_dtype"], "fp8");
  EXPECT_LT(j8["tpot_ms"].get<double>(), jb["tpot_ms"].get<double>());
  ExpectUsageError(ds + " --attn-dtype fp4", "--attn-dtype");
  ExpectUsageError("eval --model llama-3.1-8b --gpu a100 --gpus 1 --strategy tp=1 --attn-dtype fp8",
                   "--attn-dtype fp8");
}

TEST(EngineAndMtpFlags, MtpAndSchedulerInJson) {
  const std::string ds =
      "eval --model deepseek-v3 --gpu h200 --gpus 8 --strategy tp=1,dp=8,ep=8 --batch 16 "
      "--context 2048 --json";
  const Result r = RunL2s(ds + " --mtp 3 --engine trtllm");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["mtp"], 3);
  EXPECT_DOUBLE_EQ(j["mtp_accept"].get<double>(), 2.82);  // published curve, depth 3
  EXPECT_GT(j["breakdown"]["mtp_draft_ms"].get<double>(), 0);
  EXPECT_EQ(j["scheduler"]["engine"], "trtllm");
  EXPECT_EQ(j["scheduler"]["max_num_tokens"], 8192);         // TensorRT-LLM's default
  EXPECT_EQ(j["scheduler"]["token_batch_limit"], 8192 / 4);  // 4 tokens per sequence
  EXPECT_EQ(j["scheduler"]["cuda_graph_max_batch"], 128);
  // Throughput counts accepted tokens: TPOT x tokens/s per sequence = 1.
  EXPECT_NEAR(j["tpot_ms"].get<double>() / 1e3 * j["tokens_per_s"].get<double>() / (8 * 16), 1.0,
              1e-9);
}

}  // namespace

namespace {

// Cost and energy (issue 46): best.cost / eval's cost follow plan/cost.h's formulas from the
// printed throughput; no price gives null $ fields (l2s has no built-in prices) but still tokens
// per joule at the preset's board power (H100: 700 W).
TEST(EvalCli, CostFollowsThePriceAndTheBoardPower) {
  const std::string base =
      "eval --model llama-3.1-8b --gpu h100 --gpus 2 --mode serve --isl 1024 --osl 256 "
      "--strategy tp=1,dp=2 --json";
  const Result priced = RunL2s(base + " --price-per-gpu-hour 3.6");
  ASSERT_EQ(priced.code, 0) << priced.err;
  const nlohmann::json j = ParseJson(priced.out);
  const double tps = j["tokens_per_s_per_gpu"];
  const nlohmann::json& c = j["cost"];
  // $3.6/GPU-h = $0.001/s per GPU; input+output tokens = output x (1024 + 256) / 256.
  EXPECT_NEAR(c["usd_per_mtok_output"].get<double>(), 0.001 / tps * 1e6, 1e-9);
  EXPECT_NEAR(c["usd_per_mtok_total"].get<double>(), 0.001 / (tps * 5) * 1e6, 1e-9);
  EXPECT_NEAR(c["tokens_per_joule_output"].get<double>(), tps / 700, 1e-9);
  EXPECT_DOUBLE_EQ(c["usd_per_hour"].get<double>(), 7.2);
  EXPECT_DOUBLE_EQ(c["power_w"].get<double>(), 1400);
  EXPECT_EQ(c["gpus"], 2);

  const Result unpriced = RunL2s(base);
  ASSERT_EQ(unpriced.code, 0) << unpriced.err;
  const nlohmann::json u = ParseJson(unpriced.out);
  EXPECT_TRUE(u["cost"]["usd_per_mtok_output"].is_null());
  EXPECT_TRUE(u["cost"]["price_per_gpu_hour"].is_null());
  EXPECT_NEAR(u["cost"]["tokens_per_joule_output"].get<double>(), tps / 700, 1e-9);

  const Result text = RunL2s(
      "eval --model llama-3.1-8b --gpu h100 --gpus 2 --mode serve --isl 1024 --osl 256 "
      "--strategy tp=1,dp=2 --price-per-gpu-hour 3.6");
  EXPECT_NE(text.out.find("per million output tokens"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("at $3.60/GPU-h"), std::string::npos) << text.out;
  // A prefill's tokens are its prompts': priced and counted per prompt token, not per "output
  // token" (its first tokens, 0.00 per joule at two decimals).
  const Result prefill = RunL2s(
      "eval --model llama-3.1-8b --gpu h100 --gpus 2 --mode prefill --isl 1024 "
      "--strategy tp=1,dp=2 --price-per-gpu-hour 3.6");
  ASSERT_EQ(prefill.code, 0) << prefill.err;
  EXPECT_NE(prefill.out.find("per million prompt tokens at $3.60/GPU-h; "), std::string::npos)
      << prefill.out;
  EXPECT_NE(prefill.out.find(" prompt tokens per joule at 700 W per GPU"), std::string::npos);
  EXPECT_EQ(prefill.out.find("output tokens per joule"), std::string::npos) << prefill.out;

  ExpectUsageError(
      "eval --model llama-3.1-8b --gpu h100 --gpus 2 --strategy tp=1 --price-per-gpu-hour -1",
      "--price-per-gpu-hour");

  // A GPU whose board power the hardware reference does not state (MI325X): null energy fields
  // and a cost line that says why, beside the price's.
  const Result no_power = RunL2s(
      "eval --model llama-3.1-8b --gpu mi325x --gpus 1 --mode serve --isl 1024 --osl 256 "
      "--strategy tp=1 --price-per-gpu-hour 2");
  ASSERT_EQ(no_power.code, 0) << no_power.err;
  EXPECT_NE(no_power.out.find("at $2.00/GPU-h; no tokens per joule: no board power for this GPU"),
            std::string::npos)
      << no_power.out;
  const nlohmann::json n = ParseJson(
      RunL2s("eval --model llama-3.1-8b --gpu mi325x --gpus 1 --mode serve --isl 1024 --osl 256 "
             "--strategy tp=1 --json")
          .out);
  EXPECT_TRUE(n["cost"]["tokens_per_joule_output"].is_null());
  EXPECT_TRUE(n["cost"]["power_w"].is_null());
}

}  // namespace
