// Disaggregated serving end to end through the binary (L2S_BIN): `plan --serving disagg|auto`
// and its JSON contract (issue 12), a cluster with two GPU pools, `explain --pool`, and the
// one-line errors with their exit codes. Small problems (Llama-3.1-8B on 8 GPUs) keep it fast.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_l2s.h"

namespace {

using l2s_cli_test::Result;
using l2s_cli_test::TempPath;

Result RunL2s(const std::vector<std::string>& args) {
  return l2s_cli_test::RunL2s(args, "l2s_disagg");
}

int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

const std::vector<std::string> kServe = {"plan",  "--model", "llama-3.1-8b", "--gpus", "8",
                                         "--mode", "serve",  "--isl",        "1024",   "--osl",
                                         "256",   "--budget", "300"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> a = kServe;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(DisaggCli, DisaggJsonContract) {
  const Result r = RunL2s(With({"--serving", "disagg", "--json", "--oracle-seconds", "120"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  EXPECT_EQ(b["serving"], "disagg");
  for (const char* role : {"prefill", "decode"}) {
    ASSERT_TRUE(b[role].is_object()) << role;
    EXPECT_TRUE(b[role]["strategy"].is_string());
    EXPECT_GE(b[role]["instances"].get<int>(), 1);
    EXPECT_GE(b[role]["gpus_per_instance"].get<int>(), 1);
    EXPECT_GE(b[role]["spare_capacity"].get<double>(), 0.0);
  }
  const int used = b["prefill"]["instances"].get<int>() * b["prefill"]["gpus_per_instance"].get<int>() +
                   b["decode"]["instances"].get<int>() * b["decode"]["gpus_per_instance"].get<int>();
  EXPECT_EQ(used, b["gpus_used"].get<int>());
  EXPECT_LE(used, 8);
  for (const char* k : {"kv_transfer_ms", "ttft_ms", "tpot_ms", "tokens_per_s_per_gpu"})
    EXPECT_GT(b[k].get<double>(), 0.0) << k;
  // TTFT = prefill latency + KV transfer + one decode step.
  EXPECT_NEAR(b["ttft_ms"].get<double>(),
              b["prefill"]["prefill_latency_ms"].get<double>() + b["kv_transfer_ms"].get<double>() +
                  b["decode_step_ms"].get<double>(),
              1e-6 * b["ttft_ms"].get<double>());
  EXPECT_TRUE(j["baselines"]["aggregated"].is_null());
  // The oracle solved the joint space and the plan is not below it.
  EXPECT_EQ(b["oracle"]["status"], "solved");
  EXPECT_GE(b["tokens_per_s_per_gpu"].get<double>(),
            b["oracle"]["tokens_per_s_per_gpu"].get<double>() * (1 - 1e-9));
  EXPECT_TRUE(b["speculation"].is_null());  // llama-3.1-8b cannot speculate
  EXPECT_EQ(b["prefill"]["mtp"], 0);
  EXPECT_EQ(b["decode"]["mtp"], 0);
  // With an EAGLE-3 draft, speculation is both roles' (fixed here by --mtp 2): the prefill
  // servers start with the decode side's setting, and one joint space is planned.
  const Result d = RunL2s(With({"--serving", "disagg", "--json", "--draft-model",
                                "org/eagle3-draft", "--mtp", "2"}));
  ASSERT_EQ(d.code, 0) << d.err;
  const nlohmann::json dj = nlohmann::json::parse(d.out);
  const nlohmann::json& s = dj["best"];
  EXPECT_EQ(s["speculation"], true);
  EXPECT_EQ(s["prefill"]["mtp"], 2);
  EXPECT_EQ(s["decode"]["mtp"], 2);
  EXPECT_NE(s["prefill"]["strategy"].get<std::string>().find("mtp=2"), std::string::npos);
  EXPECT_EQ(s["search"]["calls_other_speculation"], 0);
}

// --search oracle on the joint space is SolveDisaggExact (it used to fail: the oracle searcher has
// no encoded-space search), with or without baselines; the search and the oracle baseline are
// the same answer, solved once.
TEST(DisaggCli, SearchOracleSolvesTheJointSpace) {
  const Result r = RunL2s(With({"--serving", "disagg", "--search", "oracle", "--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  EXPECT_EQ(b["serving"], "disagg");
  EXPECT_EQ(b["search"]["searcher"], "oracle");
  EXPECT_EQ(b["oracle"]["status"], "solved");
  // The plan is the optimum, its instances' batches refined between the space's options
  // (plan/refine.h) when that gains: at least the optimum, equal to it when nothing was refined.
  const bool refined = b["prefill"]["batch_refined_from"].is_number() ||
                       b["decode"]["batch_refined_from"].is_number();
  if (refined)
    EXPECT_GT(b["tokens_per_s_per_gpu"].get<double>(),
              b["oracle"]["tokens_per_s_per_gpu"].get<double>());
  else
    EXPECT_DOUBLE_EQ(b["tokens_per_s_per_gpu"].get<double>(),
                     b["oracle"]["tokens_per_s_per_gpu"].get<double>());
  EXPECT_DOUBLE_EQ(b["search"]["tokens_per_s_per_gpu"].get<double>(),
                   b["oracle"]["tokens_per_s_per_gpu"].get<double>());
  // The same optimum with --no-baselines (the search itself is the oracle).
  const Result q =
      RunL2s(With({"--serving", "disagg", "--search", "oracle", "--json", "--no-baselines"}));
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(q.out)["best"]["tokens_per_s_per_gpu"].get<double>(),
                   b["tokens_per_s_per_gpu"].get<double>());
  // auto: both halves solved exactly; the answer is at least the disaggregated optimum.
  const Result a = RunL2s(With({"--search", "oracle", "--json", "--no-baselines"}));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_GE(nlohmann::json::parse(a.out)["best"]["tokens_per_s_per_gpu"].get<double>(),
            b["tokens_per_s_per_gpu"].get<double>() * (1 - 1e-12));
}

// megatron and default have no joint-space search: one line naming the flag and what works
// (disagg: exit 2); auto keeps the aggregated plan and says why the disaggregated half is missing.
TEST(DisaggCli, OneSpaceSearchersSayTheyCannotSearchTheJointSpace) {
  for (const char* s : {"megatron", "default"}) {
    const Result r = RunL2s(With({"--serving", "disagg", "--search", s, "--no-baselines"}));
    EXPECT_EQ(r.code, 2) << s << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(std::string("--search ") + s), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("rl, sa, ga, rw or oracle"), std::string::npos) << r.err;
    const Result a = RunL2s(With({"--search", s, "--no-baselines", "--json"}));
    ASSERT_EQ(a.code, 0) << s << a.err;
    const nlohmann::json j = nlohmann::json::parse(a.out);
    EXPECT_EQ(j["best"]["serving"], "agg");
    EXPECT_NE(j["baselines"]["disaggregated_error"].get<std::string>().find("joint"),
              std::string::npos);
  }
}

TEST(DisaggCli, AutoReturnsTheBetterAndReportsTheOther) {
  const Result r = RunL2s(With({"--json", "--oracle-seconds", "120"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  ASSERT_TRUE(b["serving"] == "agg" || b["serving"] == "disagg") << b["serving"];
  const nlohmann::json& other =
      b["serving"] == "disagg" ? j["baselines"]["aggregated"] : j["baselines"]["disaggregated"];
  ASSERT_TRUE(other.is_object()) << j["baselines"].dump();
  EXPECT_GE(b["tokens_per_s_per_gpu"].get<double>(), other["tokens_per_s_per_gpu"].get<double>());
}

// The recommended disaggregated plan comes with its launch commands: one entry per engine with
// disaggregated serving; a runnable one starts both pools with the plan's instance counts and GPUs
// per instance, and a router; the text has the matching section.
TEST(DisaggCli, DisaggPlanCarriesItsLaunchCommands) {
  const Result r = RunL2s(With({"--serving", "disagg", "--json", "--oracle-seconds", "120"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  const nlohmann::json& l = j["launch"];
  ASSERT_TRUE(l.is_object()) << j.dump();
  for (const char* engine : {"sglang", "vllm", "trtllm", "dynamo"}) {
    ASSERT_TRUE(l.contains(engine)) << engine;
    const nlohmann::json& e = l[engine];
    if (!e["runnable"].get<bool>()) continue;
    int prefill = 0, decode = 0, router = 0;
    for (const nlohmann::json& p : e["processes"]) {
      const std::string role = p["role"].get<std::string>();
      EXPECT_FALSE(p["command"].get<std::string>().empty()) << engine << " " << role;
      if (role == "prefill") {
        ++prefill;
        EXPECT_EQ(p["count"], b["prefill"]["instances"]) << engine;
        EXPECT_EQ(p["gpus"], b["prefill"]["gpus_per_instance"]) << engine;
      } else if (role == "decode") {
        ++decode;
        EXPECT_EQ(p["count"], b["decode"]["instances"]) << engine;
        EXPECT_EQ(p["gpus"], b["decode"]["gpus_per_instance"]) << engine;
      } else {
        ++router;
      }
    }
    EXPECT_EQ(prefill, 1) << engine;
    EXPECT_EQ(decode, 1) << engine;
    EXPECT_GE(router, 1) << engine;
  }
  EXPECT_TRUE(l["sglang"]["runnable"].get<bool>());
  // The prefill servers admit SGLang's and vLLM's own running limit, TensorRT-LLM's context
  // servers the priced batch (launch/disagg_launch.h PoolPlan::engine_running_limit).
  auto prefill_note = [&](const char* engine) {
    for (const nlohmann::json& p : l[engine]["processes"])
      if (p["role"] == "prefill")
        for (const nlohmann::json& n : p["notes"])
          if (n.get<std::string>().find("the engine's own default") != std::string::npos)
            return true;
    return false;
  };
  EXPECT_TRUE(prefill_note("sglang"));
  EXPECT_TRUE(prefill_note("vllm"));
  EXPECT_FALSE(prefill_note("trtllm"));
  const Result t = RunL2s(With({"--serving", "disagg", "--oracle-seconds", "120"}));
  ASSERT_EQ(t.code, 0) << t.err;
  for (const char* s : {"Launch (disaggregated)", "--disaggregation-mode prefill",
                        "--disaggregation-mode decode", "trtllm-serve disaggregated"})
    EXPECT_NE(t.out.find(s), std::string::npos) << s << "\n" << t.out;
}

// compare --serving disagg: megatron and default have no joint-space form, so the default list
// leaves them out and naming one is a one-line usage error.
// The pools are planned in what the engine launches as pool servers: vLLM's without pipeline
// stages (its KV-cache transfer serves none; an unrestricted prefill pool here runs pp=4).
TEST(DisaggCli, VllmPoolsRunWithoutPipelineStages) {
  const std::vector<std::string> q = {"plan", "--model", "qwen3-235b-a22b", "--gpu", "mi300x",
                                      "--gpus", "16", "--mode", "serve", "--isl", "4096", "--osl",
                                      "1024", "--slo", "ttft_ms=2000,tpot_ms=50", "--serving",
                                      "disagg", "--json", "--engine"};
  std::vector<std::string> vllm = q, ideal = q;
  vllm.push_back("vllm");
  ideal.push_back("ideal");
  const Result v = RunL2s(vllm), i = RunL2s(ideal);
  ASSERT_EQ(v.code, 0) << v.err;
  ASSERT_EQ(i.code, 0) << i.err;
  const auto jv = nlohmann::json::parse(v.out)["best"], ji = nlohmann::json::parse(i.out)["best"];
  for (const char* role : {"prefill", "decode"}) {
    const std::string s = jv[role]["strategy"].get<std::string>();
    EXPECT_EQ(s.rfind("pp=1,", 0), 0u) << role << " " << s;
  }
  EXPECT_TRUE(jv["launchable"].get<bool>());
  // The unrestricted pools do use stages here: the rule is what keeps vLLM's at pp = 1.
  EXPECT_NE(ji["prefill"]["strategy"].get<std::string>().rfind("pp=1,", 0), 0u) << i.out;
}

TEST(DisaggCli, CompareOnTheJointSpace) {
  const std::string dir = TempPath("l2s_cmp_disagg");
  const std::vector<std::string> base = {"compare", "--model", "llama-3.1-8b", "--gpus", "8",
                                         "--mode", "serve", "--isl", "1024", "--osl", "256",
                                         "--serving", "disagg", "--seeds", "2", "--budget", "200",
                                         "--out-dir", dir, "--json"};
  const Result r = RunL2s(base);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["searchers"].is_object()) << j.dump();
  EXPECT_TRUE(j["searchers"].contains("rl"));
  EXPECT_TRUE(j["searchers"].contains("oracle"));
  EXPECT_FALSE(j["searchers"].contains("megatron"));
  std::vector<std::string> bad = base;
  bad.insert(bad.end(), {"--searchers", "rl,megatron"});
  const Result e = RunL2s(bad);
  EXPECT_EQ(e.code, 2);
  EXPECT_EQ(CountLines(e.err), 1) << e.err;
  EXPECT_NE(e.err.find("--searchers: megatron"), std::string::npos) << e.err;
}

TEST(DisaggCli, TextNamesBothPoolsAndTheTtftSum) {
  const Result r = RunL2s(With({"--serving", "disagg", "--no-baselines"}));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"Disaggregated plan", "prefill ", "decode ", "capacity spare", "TTFT ",
                        "KV transfer", "tokens/s per GPU over all 8 GPUs"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(DisaggCli, AnMoeAggregatedBaselineIsSizedIntoReplicas) {
  // DeepSeek-R1 on 8 MI355X, 1k/1k: the aggregated plan the disaggregated one is compared with is
  // sized into replicas (cli/plan_replicas.h): every size the node tiles into that holds the
  // weights is planned (4 and 8 GPUs; 1 and 2 cannot hold 673 GB), and the baseline is the best
  // per GPU. A dense model (Llama-3.1-8B here) plans its dp ranks as replicas already: no sizing.
  const Result r = RunL2s({"plan", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "mi355x",
                           "--gpus", "8", "--mode", "serve", "--isl", "1024", "--osl", "1024",
                           "--slo", "ttft_ms=2000,tpot_ms=50", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["replicas"].is_object()) << r.out;
  const nlohmann::json& sizes = j["replicas"]["sizes"];
  ASSERT_EQ(sizes.size(), 4u);  // 1, 2, 4, 8
  double best = 0;
  int best_gpus = 0;
  for (const nlohmann::json& x : sizes) {
    const int g = x["gpus_per_instance"].get<int>();
    EXPECT_EQ(x["instances"].get<int>() * g, 8);
    EXPECT_EQ(x["planned"].get<bool>(), g >= 4) << x.dump();
    if (g >= 4) {
      ASSERT_TRUE(x["found"].get<bool>()) << x.dump();
      if (x["tokens_per_s_per_gpu"].get<double>() > best * (1 + 1e-9)) {
        best = x["tokens_per_s_per_gpu"].get<double>();
        best_gpus = g;
      }
    } else {
      EXPECT_NE(x["why_none"].get<std::string>().find("exceed"), std::string::npos);
    }
  }
  // The baseline (or the plan, when aggregated wins) is the best size's plan.
  const nlohmann::json& agg =
      j["best"]["serving"] == "agg" ? j["best"] : j["baselines"]["aggregated"];
  EXPECT_NEAR(agg["tokens_per_s_per_gpu"].get<double>(), best, 1e-6 * best);
  EXPECT_EQ(agg["gpus_per_instance"].get<int>(), best_gpus);
  EXPECT_EQ(j["replicas"]["gpus_per_instance"].get<int>(), best_gpus);
  const Result dense = RunL2s(With({"--serving", "auto", "--json"}));
  ASSERT_EQ(dense.code, 0) << dense.err;
  EXPECT_TRUE(nlohmann::json::parse(dense.out)["replicas"].is_null());
}

TEST(DisaggCli, MixedPoolsCluster) {
  const std::string path = TempPath("l2s_pools") + ".json";
  {
    std::ofstream f(path);
    f << R"({"name": "mixed", "pools": [{"name": "a", "gpu": "h100", "num_gpus": 4},
             {"name": "b", "gpu": "h200", "num_gpus": 4}], "num_gpus": 8})";
  }
  const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--cluster", path, "--mode", "serve",
                           "--isl", "1024", "--osl", "256", "--budget", "300", "--json",
                           "--oracle-seconds", "120"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["problem"]["gpus"], 8);
  EXPECT_EQ(j["problem"]["pools"].size(), 2u);
  const nlohmann::json& b = j["best"];
  EXPECT_EQ(b["serving"], "disagg");
  EXPECT_TRUE(b["prefill"]["pool"] == "a" || b["prefill"]["pool"] == "b");
  // Pools that do not add up: one line, exit 2.
  {
    std::ofstream f(path);
    f << R"({"pools": [{"name": "a", "gpu": "h100", "num_gpus": 4},
             {"name": "b", "gpu": "h200", "num_gpus": 4}], "num_gpus": 16})";
  }
  const Result bad = RunL2s({"plan", "--model", "llama-3.1-8b", "--cluster", path, "--mode", "serve"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(CountLines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("do not add up"), std::string::npos) << bad.err;
  std::remove(path.c_str());
}

TEST(DisaggCli, BadInputIsOneLine) {
  struct Case {
    std::vector<std::string> args;
    int code;
    const char* words;
  };
  const std::vector<Case> cases = {
      {{"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "decode", "--serving", "disagg"},
       2, "--serving disagg applies to --mode serve only"},
      {With({"--serving", "both"}), 2, "--serving must be agg, disagg or auto"},
      {With({"--serving", "disagg", "--prefill-gpus", "8"}), 2, "leaves no GPU for decode"},
      {With({"--serving", "agg", "--prefill-gpus", "4"}), 2, "--prefill-gpus describes"},
      {With({"--serving", "disagg", "--slo", "tpot_ms=0.001"}), 1,
       "no disaggregated deployment is valid"},
      {{"plan", "--model", "deepseek-v3", "--gpus", "8", "--mode", "serve", "--serving", "disagg",
        "--prefill-gpus", "4", "--budget", "50"},
       1, "no disaggregated deployment is valid"},
      {{"explain", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "decode", "--pool",
        "prefill", "--strategy", "tp=8"},
       2, "needs --mode serve"},
  };
  for (const Case& c : cases) {
    const Result r = RunL2s(c.args);
    EXPECT_EQ(r.code, c.code) << c.words << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
  }
}

TEST(DisaggCli, ExplainOnePool) {
  const Result r = RunL2s({"explain", "--model", "llama-3.1-8b", "--gpus", "4", "--mode", "serve",
                           "--isl", "1024", "--osl", "256", "--pool", "decode", "--strategy",
                           "tp=4", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "decode");  // the decode instance's problem
  // A prefill instance of a speculating deployment: the MTP module's extend over the prompts,
  // once per step whatever the depth.
  const Result p = RunL2s({"explain", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8",
                           "--mode", "serve", "--isl", "4096", "--osl", "1024", "--pool",
                           "prefill", "--strategy", "tp=1,dp=8,ep=8,batch=2,mtp=2"});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("== MTP module over the prompts (its extend; last stage), once per step "
                       "whatever the depth (mtp=2) =="),
            std::string::npos)
      << p.out;
}

}  // namespace

namespace {

// Without a TTFT SLO, a cluster too small for one prefill and one decode instance says so, not
// "meets the TTFT SLO of 0 ms": Llama-3.1-70B in BF16 (141 GB of weights) needs two 80 GiB H100s
// per instance, four for a pair, and the cluster has two.
TEST(DisaggCli, TooFewGpusForAPairIsNotAnSloMiss) {
  const Result r = RunL2s({"plan", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "2",
                           "--mode", "serve", "--serving", "auto"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no prefill + decode pair fits in the cluster's GPUs"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("TTFT SLO of 0 ms"), std::string::npos) << r.out;
}

}  // namespace
