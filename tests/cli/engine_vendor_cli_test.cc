// Engines by GPU vendor, end to end through the binary (issue 44 items 3 and 6): on AMD GPUs
// `plan` tabulates and launches vLLM, SGLang and ATOM (never TensorRT-LLM or Dynamo), an engine
// without a build for the GPUs is one line and exit 2, ATOM plans one node and aggregated only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "run_l2s.h"

namespace {

using l2s_cli_test::Result;
using l2s_cli_test::RunL2s;
using nlohmann::json;

const std::vector<std::string> kAmd = {
    "plan",  "--model", "deepseek-v3", "--gpu",   "mi355x", "--gpus", "8",     "--mode",
    "serve", "--isl",   "1024",        "--osl",   "256",    "--slo",  "ttft_ms=2000,tpot_ms=50"};

std::vector<std::string> With(std::vector<std::string> a, std::initializer_list<const char*> more) {
  for (const char* m : more) a.push_back(m);
  return a;
}

void ExpectOneLineError(const Result& r, const std::string& line) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "l2s: error: " + line + "\n");
}

TEST(EngineVendorCli, AmdPlansTabulateAndLaunchOnlyAmdEngines) {
  const Result r = RunL2s(With(kAmd, {"--serving", "agg", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::set<std::string> tabulated, launched;
  for (const json& e : j.at("engines")) tabulated.insert(e.at("engine").get<std::string>());
  for (const auto& [k, v] : j.at("launch").items()) launched.insert(k);
  EXPECT_EQ(tabulated, (std::set<std::string>{"vllm", "sglang", "atom"}));
  EXPECT_EQ(launched, (std::set<std::string>{"vllm", "sglang", "megatron", "atom"}));
}

TEST(EngineVendorCli, DisaggregatedLaunchOnAmdHasNoNvidiaOnlyEngine) {
  const Result r = RunL2s(With(kAmd, {"--serving", "disagg", "--engine", "sglang", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::set<std::string> launched;
  for (const auto& [k, v] : j.at("launch").items()) launched.insert(k);
  EXPECT_EQ(launched, (std::set<std::string>{"sglang", "vllm"}));
}

TEST(EngineVendorCli, EnginesWithoutABuildForTheGpusAreOneLine) {
  ExpectOneLineError(RunL2s(With(kAmd, {"--engine", "trtllm"})),
                     "--engine: TensorRT-LLM does not run on AMD GPUs (mi355x): the engines for "
                     "them are vllm, sglang, megatron, atom");
  ExpectOneLineError(
      RunL2s({"eval", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "1", "--strategy",
              "tp=1", "--engine", "atom"}),
      "--engine: ATOM does not run on NVIDIA GPUs (h100): the engines for them are vllm, sglang, "
      "trtllm, dynamo+vllm, dynamo+sglang, dynamo+trtllm, megatron");
  // A dense model's one instance over 16 GPUs would span two nodes: refused, saying how to
  // replicate one node instead.
  ExpectOneLineError(RunL2s({"plan", "--model", "llama-3.1-8b", "--gpu", "mi355x", "--gpus", "16",
                             "--mode", "serve", "--engine", "atom"}),
                     "--engine: ATOM serves from one node: plan instances of at most 8 GPUs (one "
                     "node of mi355x; plan --instance-gpus 8 replicates one behind a router), or "
                     "a multi-node instance with another engine (got 16 GPUs)");
}

// A release older than the engine's capability row is one line and exit 2 in every command
// that takes --engine (plan, eval, capacity); the row's release or a later one plans as the
// bare name does.
TEST(EngineVendorCli, AReleaseOlderThanTheEngineRowIsOneLine) {
  const std::string why =
      "--engine: l2s plans SGLang from release 0.5 on (its capability row: the rules and launch "
      "flags read from that release; docs/PLAN.md \"Engine rules\"); 'sglang-0.4.6' asks for "
      "0.4.6: name release 0.5 or later, or none";
  ExpectOneLineError(RunL2s(With(kAmd, {"--engine", "sglang-0.4.6"})), why);
  ExpectOneLineError(RunL2s({"eval", "--model", "deepseek-v3", "--gpu", "mi355x", "--gpus", "8",
                             "--strategy", "tp=8,ep=8", "--engine", "sglang-0.4.6"}),
                     why);
  ExpectOneLineError(RunL2s({"capacity", "--model", "deepseek-v3", "--gpu", "mi355x", "--gpus",
                             "8", "--rate", "1", "--slo", "p99_ttft_ms=2000", "--engine",
                             "sglang-0.4.6"}),
                     why);
  const Result bare = RunL2s(With(kAmd, {"--serving", "agg", "--engine", "sglang", "--json"}));
  const Result named = RunL2s(With(kAmd, {"--serving", "agg", "--engine", "sglang-0.5.5", "--json"}));
  ASSERT_EQ(bare.code, 0) << bare.err;
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(json::parse(bare.out).at("best"), json::parse(named.out).at("best"));
}

// ATOM on more than one node: replicas of at most a node each - an MoE model's sizing over the
// sizes that fit (the 16-GPU row says why none), or --instance-gpus for a dense model.
TEST(EngineVendorCli, AtomOnSeveralNodesRunsOneNodeReplicas) {
  const Result moe = RunL2s({"plan", "--model", "qwen3-30b-a3b", "--gpu", "mi355x", "--gpus", "16",
                             "--mode", "serve", "--isl", "2000", "--osl", "500", "--slo",
                             "ttft_ms=1000,tpot_ms=30", "--engine", "atom", "--json"});
  ASSERT_EQ(moe.code, 0) << moe.err;
  const nlohmann::json j = nlohmann::json::parse(moe.out);
  EXPECT_LE(j["best"]["gpus_per_instance"].get<int>(), 8) << moe.out;
  EXPECT_GE(j["best"]["instances"].get<int>(), 2) << moe.out;
  const Result dense = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpu", "mi355x", "--gpus",
                               "16", "--mode", "serve", "--engine", "atom", "--instance-gpus", "8",
                               "--json"});
  ASSERT_EQ(dense.code, 0) << dense.err;
  const nlohmann::json d = nlohmann::json::parse(dense.out);
  EXPECT_EQ(d["best"]["gpus_per_instance"], 8) << dense.out;
  EXPECT_EQ(d["best"]["instances"], 2) << dense.out;
  const Result text = RunL2s({"plan", "--model", "qwen3-30b-a3b", "--gpu", "mi355x", "--gpus",
                              "16", "--mode", "serve", "--isl", "2000", "--osl", "500", "--slo",
                              "ttft_ms=1000,tpot_ms=30", "--engine", "atom"});
  EXPECT_NE(text.out.find("             16          1             -  ATOM serves from one node"),
            std::string::npos)
      << text.out;
}

// --serving disagg without --engine: the pools are planned for the fastest engine that launches
// disaggregated pools, and the line naming it says ATOM was not a candidate.
TEST(EngineVendorCli, DisaggregatedPoolsAreNeverAtoms) {
  const Result r = RunL2s(With(kAmd, {"--serving", "disagg"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(": of the engines that launch disaggregated pools (vLLM, SGLang; not ATOM), "
                       "the one whose aggregated plan is the fastest"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("  engine   ATOM"), std::string::npos) << r.out;
}

TEST(EngineVendorCli, AtomPlansAreAggregated) {
  ExpectOneLineError(RunL2s(With(kAmd, {"--engine", "atom", "--serving", "disagg"})),
                     "--serving disagg: l2s launches no disaggregated ATOM deployment (its plans "
                     "are aggregated; docs/PLAN.md \"Engine rules\")");
  const Result r = RunL2s(With(kAmd, {"--engine", "atom", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("l2s: warning: ATOM plans are aggregated"), std::string::npos) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("best").at("engine"), "atom");
  EXPECT_TRUE(j.at("best").at("launchable").get<bool>());
  EXPECT_TRUE(j.at("launch").at("atom").at("exact").get<bool>());
}

// QuickReduce (AMD's quantised all-reduce): priced where it runs and launched as priced. A
// Llama-3.1-70B TP8 prefill of 8k tokens on MI355X all-reduces 8192 x 8192 x 2 B = 128 MiB per
// layer, above SGLang's 2 MiB INT4 minimum: faster with --quick-reduce int4; the plan's SGLang
// command sets ROCM_QUICK_REDUCE_QUANTIZATION=INT4 when its tp is 2, 4 or 8.
TEST(EngineVendorCli, QuickReduceIsPricedAndLaunchedOnAmdOnly) {
  const std::vector<std::string> eval = {"eval",     "--model", "llama-3.1-70b", "--gpu",
                                         "mi355x",   "--gpus",  "8",             "--mode",
                                         "prefill",  "--isl",   "8192",          "--strategy",
                                         "tp=8",     "--engine", "sglang",       "--json"};
  const Result off = RunL2s(eval);
  const Result q4 = RunL2s(With(eval, {"--quick-reduce", "int4"}));
  ASSERT_EQ(off.code, 0) << off.err;
  ASSERT_EQ(q4.code, 0) << q4.err;
  const double ttft_off = json::parse(off.out).at("ttft_ms").get<double>();
  const double ttft_q4 = json::parse(q4.out).at("ttft_ms").get<double>();
  EXPECT_LT(ttft_q4, ttft_off * 0.99) << ttft_q4 << " vs " << ttft_off;
  // --quick-reduce off is the default.
  EXPECT_EQ(json::parse(RunL2s(With(eval, {"--quick-reduce", "off"})).out).at("ttft_ms"),
            json::parse(off.out).at("ttft_ms"));

  const Result plan = RunL2s(With(kAmd, {"--serving", "agg", "--engine", "sglang",
                                         "--quick-reduce", "int4", "--json"}));
  ASSERT_EQ(plan.code, 0) << plan.err;
  const json j = json::parse(plan.out);
  const int tp = j.at("best").at("degrees").at("tp").get<int>();
  const std::string cmd = j.at("launch").at("sglang").at("command").get<std::string>();
  EXPECT_EQ(cmd.rfind("ROCM_QUICK_REDUCE_QUANTIZATION=INT4 python -m sglang.launch_server", 0) == 0,
            tp == 2 || tp == 4 || tp == 8)
      << cmd;

  ExpectOneLineError(RunL2s(With(eval, {"--quick-reduce", "int8"})),
                     "--quick-reduce: expected off, int6 or int4, got \"int8\"");
  std::vector<std::string> h200 = eval;
  h200[4] = "h200";
  ExpectOneLineError(RunL2s(With(h200, {"--quick-reduce", "int4"})),
                     "--quick-reduce: QuickReduce is AMD's all-reduce (ROCm); h200 is not an AMD "
                     "GPU");
  std::vector<std::string> atom = eval;
  atom[14] = "atom";
  ExpectOneLineError(RunL2s(With(atom, {"--quick-reduce", "int6"})),
                     "--quick-reduce: ATOM does not turn QuickReduce on; SGLang and vLLM do "
                     "(--engine sglang or --engine vllm, or no --engine to compare the engines)");
}

// ATOM loads only the model classes of its model runner's registry: Qwen2.5 (Qwen2ForCausalLM)
// gets an ATOM row that says so, no ATOM command, and --engine atom is one line.
TEST(EngineVendorCli, AtomRefusesAModelClassOutsideItsRegistry) {
  const std::string cfg = std::string(L2S_SHARED_DIR) + "/models/hf/Qwen--Qwen2.5-72B.json";
  const std::vector<std::string> plan = {"plan",  "--model", cfg,     "--gpu",  "mi355x", "--gpus",
                                         "8",     "--mode",  "serve", "--isl",  "2048",   "--osl",
                                         "256",   "--slo",   "ttft_ms=2000,tpot_ms=50"};
  const Result r = RunL2s(With(plan, {"--serving", "agg", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  const std::string why =
      "ATOM does not load Qwen2ForCausalLM: it is not in ATOM's model runner "
      "(support_model_arch_dict, ROCm/ATOM @ 00afbe3)";
  bool atom_row = false;
  for (const json& e : j.at("engines"))
    if (e.at("engine") == "atom") {
      atom_row = true;
      EXPECT_FALSE(e.at("found").get<bool>());
      EXPECT_EQ(e.at("why_none"), why);
    }
  EXPECT_TRUE(atom_row);
  EXPECT_NE(j.at("best").at("engine"), "atom");
  const json& launch_atom = j.at("launch").at("atom");
  EXPECT_FALSE(launch_atom.at("loads_model").get<bool>());
  EXPECT_EQ(launch_atom.at("command"), "");
  ExpectOneLineError(RunL2s(With(plan, {"--engine", "atom"})), "--engine: " + why);
}

// Without --engine the engine table prices QuickReduce for SGLang and vLLM only: ATOM's row is
// the same plan with and without it, and no engine's row gets slower (every all-reduce costs at
// most what it did).
TEST(EngineVendorCli, QuickReduceInTheEngineTableOnlyWhereTheEngineRunsIt) {
  const std::vector<std::string> plan = {"plan",  "--model", "llama-3.1-70b", "--gpu", "mi355x",
                                         "--gpus", "8",      "--mode",        "serve", "--isl",
                                         "8192",  "--osl",   "256",           "--slo",
                                         "ttft_ms=3000,tpot_ms=50", "--serving", "agg", "--json"};
  const Result off = RunL2s(plan);
  const Result q4 = RunL2s(With(plan, {"--quick-reduce", "int4"}));
  ASSERT_EQ(off.code, 0) << off.err;
  ASSERT_EQ(q4.code, 0) << q4.err;
  auto rows = [](const Result& r) {
    std::map<std::string, json> out;
    const json doc = json::parse(r.out);  // kept: a range-for over a temporary's member dangles
    for (const json& e : doc.at("engines")) out[e.at("engine").get<std::string>()] = e;
    return out;
  };
  const auto a = rows(off), b = rows(q4);
  ASSERT_TRUE(a.count("atom") && b.count("atom"));
  EXPECT_EQ(a.at("atom").dump(), b.at("atom").dump());
  for (const char* e : {"sglang", "vllm"}) {
    ASSERT_TRUE(a.count(e) && b.count(e)) << e;
    EXPECT_GE(b.at(e).at("tokens_per_s_per_gpu").get<double>(),
              a.at(e).at("tokens_per_s_per_gpu").get<double>() * (1 - 1e-9))
        << e;
  }
}

}  // namespace
