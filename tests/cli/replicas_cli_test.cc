// `l2s plan`'s aggregated replicas (cli/plan_replicas.h, docs/PLAN.md "Replicas"), end to end: a
// replicated plan is its instance's plan (one computation, one price), --instance-gpus fixes the
// size or is one clear error, and the launch output reaches every instance through a router.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_l2s.h"

namespace {

using l2s_cli_test::Result;
using l2s_cli_test::RunL2s;
using l2s_cli_test::Slurp;
using l2s_cli_test::TempPath;

// Qwen3-30B-A3B (MoE) served on 8 H100s by vLLM.
std::vector<std::string> Qwen(std::vector<std::string> extra, const std::string& gpus = "8") {
  std::vector<std::string> a = {"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", gpus,
                                "--mode", "serve", "--isl", "1024", "--osl", "256", "--slo",
                                "ttft_ms=2000,tpot_ms=50", "--engine", "vllm", "--serving", "agg"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(ReplicasCli, AReplicatedPlanIsItsInstancesPlan) {
  const Result r = RunL2s(Qwen({"--json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& b = j["best"];
  const int n = b["instances"].get<int>(), g = b["gpus_per_instance"].get<int>();
  ASSERT_GT(n, 1) << r.out;  // 8 one-GPU-bound instances beat one 8-GPU one here
  EXPECT_EQ(n * g, 8);
  EXPECT_EQ(j["problem"]["gpus"], 8);  // the problem stays the deployment's
  EXPECT_NEAR(b["deployment_tokens_per_s"].get<double>(), n * b["tokens_per_s"].get<double>(),
              1e-9 * b["deployment_tokens_per_s"].get<double>());
  // Every size was planned and the chosen one is the best per GPU.
  for (const nlohmann::json& x : j["replicas"]["sizes"]) {
    if (x["found"].get<bool>()) {
      EXPECT_LE(x["tokens_per_s_per_gpu"].get<double>(),
                b["tokens_per_s_per_gpu"].get<double>() * (1 + 1e-9))
          << x.dump();
    }
  }
  // The same plan, asked for one instance of g GPUs: the same strategy and figures.
  const Result one = RunL2s(Qwen({"--json", "--instance-gpus", std::to_string(g)}, std::to_string(g)));
  ASSERT_EQ(one.code, 0) << one.err;
  const nlohmann::json oj = nlohmann::json::parse(one.out);
  const nlohmann::json& ob = oj["best"];
  EXPECT_EQ(ob["strategy"], b["strategy"]);
  EXPECT_EQ(ob["instances"], 1);
  EXPECT_NEAR(ob["tokens_per_s_per_gpu"].get<double>(), b["tokens_per_s_per_gpu"].get<double>(),
              1e-9 * b["tokens_per_s_per_gpu"].get<double>());
  // eval of the strategy on all 8 GPUs says where one replica is evaluated.
  const Result ev = RunL2s({"eval", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "8",
                            "--mode", "serve", "--isl", "1024", "--osl", "256", "--engine", "vllm",
                            "--strategy", b["strategy"].get<std::string>()});
  EXPECT_EQ(ev.code, 2);
  EXPECT_NE(ev.err.find(fmt::format("one instance of a plan's {} replicas is evaluated on its own "
                                    "GPUs: --gpus {})",
                                    n, g)),
            std::string::npos)
      << ev.err;
  // --instance-gpus on the 8 GPUs gives the same replicated plan, marked as fixed.
  const Result fixed = RunL2s(Qwen({"--json", "--instance-gpus", std::to_string(g)}));
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const nlohmann::json fj = nlohmann::json::parse(fixed.out);
  EXPECT_EQ(fj["best"]["strategy"], b["strategy"]);
  EXPECT_EQ(fj["replicas"]["fixed"], true);
  EXPECT_EQ(fj["replicas"]["instances"], n);
}

TEST(ReplicasCli, InstanceGpusAllPlansOneInstanceAndBadSizesAreOneLine) {
  const Result all = RunL2s(Qwen({"--json", "--instance-gpus", "8"}));
  ASSERT_EQ(all.code, 0) << all.err;
  const nlohmann::json j = nlohmann::json::parse(all.out);
  EXPECT_EQ(j["best"]["instances"], 1);
  EXPECT_EQ(j["best"]["gpus_per_instance"], 8);
  EXPECT_EQ(j["replicas"]["fixed"], true);
  EXPECT_EQ(j["replicas"]["instances"], 1);
  // A size the node does not tile into.
  const Result bad = RunL2s(Qwen({"--instance-gpus", "3"}));
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "l2s: error: --instance-gpus 3: 8 GPUs in NVLink domains of 8 split into "
                     "instances of 1, 2, 4 or 8 GPUs\n");
  // Not the disaggregated pools' size.
  std::vector<std::string> d = Qwen({"--instance-gpus", "4"});
  d[std::find(d.begin(), d.end(), "agg") - d.begin()] = "disagg";
  const Result dis = RunL2s(d);
  EXPECT_EQ(dis.code, 2);
  EXPECT_NE(dis.err.find("--instance-gpus sizes an aggregated plan's replicas: not with --serving "
                         "disagg"),
            std::string::npos)
      << dis.err;
  EXPECT_EQ(std::count(dis.err.begin(), dis.err.end(), '\n'), 1) << dis.err;
}

TEST(ReplicasCli, TheLaunchReachesEveryInstanceThroughARouter) {
  const std::string dir = TempPath("l2s_replicas_emit");
  std::filesystem::remove_all(dir);
  const Result r = RunL2s(Qwen({"--emit", dir}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Replicas   4 instances x 2 GPUs (8 GPUs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm-router --worker-urls http://<instance-1>:8000 http://<instance-2>:8000 "
                       "http://<instance-3>:8000 http://<instance-4>:8000 --host 0.0.0.0 --port 8080"),
            std::string::npos)
      << r.out;
  // The files: four servers on disjoint devices and ports of the one node, and the router.
  const std::string node = Slurp(dir + "/node-1.sh");
  for (const char* devices : {"CUDA_VISIBLE_DEVICES=0,1 ", "CUDA_VISIBLE_DEVICES=2,3 ",
                              "CUDA_VISIBLE_DEVICES=4,5 ", "CUDA_VISIBLE_DEVICES=6,7 "})
    EXPECT_NE(node.find(devices), std::string::npos) << devices << "\n" << node;
  const std::string router = Slurp(dir + "/router.sh");
  EXPECT_NE(router.find("exec vllm-router --worker-urls http://<node-1>:8000 http://<node-1>:8001 "
                        "http://<node-1>:8002 http://<node-1>:8003 --host 0.0.0.0 --port 8080"),
            std::string::npos)
      << router;
  const std::string md = Slurp(dir + "/DEPLOY.md");
  EXPECT_NE(md.find("4 instance(s) of 2 GPU(s)"), std::string::npos) << md;
  EXPECT_NE(md.find("Each of the 4 replicas of the plan"), std::string::npos) << md;
  std::filesystem::remove_all(dir);
}

// With a traffic the replicas share it through the router: 80 req/s of 1,024 / 256 tokens is more
// than one 2-GPU instance sustains (its queue grows), and what 4 of them sustain within the SLOs.
TEST(ReplicasCli, ATrafficIsRoutedOverTheReplicas) {
  auto traffic = [](const std::string& gpus, std::vector<std::string> extra) {
    std::vector<std::string> a = {"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus",
                                  gpus, "--mode", "serve", "--isl", "1024", "--osl", "256",
                                  "--slo", "tpot_ms=50,p99_ttft_ms=2000,p99_tpot_ms=50", "--rate",
                                  "80", "--engine", "vllm", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return RunL2s(a);
  };
  const Result four = traffic("8", {});
  ASSERT_EQ(four.code, 0) << four.err;
  const nlohmann::json j = nlohmann::json::parse(four.out);
  EXPECT_EQ(j["best"]["instances"], 4);
  EXPECT_EQ(j["best"]["gpus_per_instance"], 2);
  EXPECT_GT(j["best"]["serve"]["output_tokens_per_s"].get<double>(), 15000);
  // The same numbers as `l2s capacity` running 4 instances of the layout on the same traffic.
  const Result cap = RunL2s(
      {"capacity", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "2", "--isl", "1024",
       "--osl", "256", "--slo", "p99_ttft_ms=2000,p99_tpot_ms=50", "--rate", "80", "--engine",
       "vllm", "--strategy", j["best"]["strategy"].get<std::string>(), "--max-batch",
       std::to_string(j["best"]["batch"].get<int>()), "--instances", "4", "--seed", "0", "--json"});
  ASSERT_EQ(cap.code, 0) << cap.err;
  const nlohmann::json cj = nlohmann::json::parse(cap.out);
  for (const char* m : {"ttft_ms", "tpot_ms"})
    for (const char* q : {"mean", "p50", "p99"})
      EXPECT_DOUBLE_EQ(cj["summary"][m][q].get<double>(), j["best"]["serve"][m][q].get<double>())
          << m << " " << q;
  const Result one = traffic("2", {"--instance-gpus", "2"});
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_NE(one.err.find("no candidate meets the SLOs"), std::string::npos) << one.err;
}

// On a GB300 NVL72 rack a host is a compute tray of 4 GPUs (HostGpus): 9 replicas of 8 GPUs run
// on 18 trays, each instance a two-node launch, the router in front of the 9 head servers.
TEST(ReplicasCli, Nvl72ReplicasArePlacedOnTraysOfFour) {
  const std::string dir = TempPath("l2s_replicas_nvl72");
  std::filesystem::remove_all(dir);
  const Result r = RunL2s({"plan", "--model", "deepseek-v3", "--cluster", "gb300-nvl72", "--dtype",
                           "fp4", "--mode", "serve", "--isl", "8192", "--osl", "1024", "--slo",
                           "ttft_ms=10000,tpot_ms=25", "--serving", "agg", "--engine", "sglang",
                           "--instance-gpus", "8", "--emit", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  // Nodes are numbered from 1: node-1 .. node-18, an instance's head on the odd ones.
  for (int k = 1; k <= 18; ++k) {
    const std::string node = Slurp(dir + "/node-" + std::to_string(k) + ".sh");
    ASSERT_FALSE(node.empty()) << k;
    EXPECT_NE(node.find("NODE_RANK=" + std::to_string((k - 1) % 2)), std::string::npos) << node;
    EXPECT_NE(node.find("--nnodes 2"), std::string::npos) << node;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/node-19.sh"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/node-0.sh"));
  const std::string router = Slurp(dir + "/router.sh");
  for (int k = 1; k <= 18; k += 2)
    EXPECT_NE(router.find("http://<node-" + std::to_string(k) + ">:30000 "), std::string::npos)
        << router;
  EXPECT_EQ(router.find("<node-2>"), std::string::npos) << router;
  const std::string lws = Slurp(dir + "/lws.yaml");
  EXPECT_NE(lws.find("replicas: 9"), std::string::npos) << lws;
  EXPECT_NE(lws.find("size: 2"), std::string::npos) << lws;
  EXPECT_NE(lws.find("nvidia.com/gpu: 4"), std::string::npos) << lws;
  std::filesystem::remove_all(dir);
  // describe and the plan's header say it.
  EXPECT_NE(r.out.find("72 x gb300 (1 node of 72, hosts of 4)"), std::string::npos) << r.out;
  const Result d = RunL2s({"describe", "--cluster", "gb300-nvl72", "--json"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out)["gpus_per_host"], 4) << d.out;
  // The scale-up fabric by its vendor's name: NVLink here, Infinity Fabric on AMD GPUs.
  const Result nv = RunL2s({"describe", "--cluster", "gb300-nvl72"});
  EXPECT_NE(nv.out.find("72 in 1 NVLink domain(s) of 72"), std::string::npos) << nv.out;
  const Result amd = RunL2s({"describe", "--gpu", "mi355x"});
  EXPECT_NE(amd.out.find("8 in 1 Infinity Fabric domain(s) of 8"), std::string::npos) << amd.out;
}

// Invariants over problems drawn by a fixed rule (seeded, not picked by hand): MoE presets x GPU
// types x cluster sizes x engines. The replicas tile the cluster; the plan is the best size of its
// table (the engine's space is solved exactly per size); and `l2s eval` of the strategy on one
// instance's GPUs prints the plan's figures.
TEST(ReplicasCli, RandomProblemsKeepTheReplicaContracts) {
  const std::vector<std::string> models = {"qwen3-30b-a3b", "mixtral-8x7b", "gpt-oss-120b",
                                           "qwen3-235b-a22b", "deepseek-v3"};
  const std::vector<std::string> gpus = {"h100", "h200", "b200", "mi355x"};
  const std::vector<int> counts = {8, 16, 32};
  std::mt19937 rng(20261205);
  int replicated = 0, checked = 0;
  for (int k = 0; k < 6; ++k) {
    const std::string model = models[rng() % models.size()];
    const std::string gpu = gpus[rng() % gpus.size()];
    const int n = counts[rng() % counts.size()];
    const std::string engine = rng() % 2 ? "vllm" : "sglang";
    const int isl = rng() % 2 ? 1024 : 4096, osl = rng() % 2 ? 256 : 1024;
    const std::vector<std::string> problem = {
        "--model", model, "--gpu", gpu, "--gpus", std::to_string(n), "--mode", "serve", "--isl",
        std::to_string(isl), "--osl", std::to_string(osl), "--slo", "ttft_ms=3000,tpot_ms=50",
        "--engine", engine};
    const std::string what = fmt::format("{} on {} x {} by {} ({}/{})", model, n, gpu, engine,
                                         isl, osl);
    std::vector<std::string> plan = {"plan", "--serving", "agg", "--json"};
    plan.insert(plan.end(), problem.begin(), problem.end());
    const Result r = RunL2s(plan);
    if (r.code == 1) continue;  // nothing meets the SLOs on these GPUs: no plan to check
    ASSERT_EQ(r.code, 0) << what << ": " << r.err;
    ++checked;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json& b = j["best"];
    const int inst = b["instances"].get<int>(), per = b["gpus_per_instance"].get<int>();
    EXPECT_EQ(inst * per, n) << what;
    replicated += inst > 1;
    const double v = b["tokens_per_s_per_gpu"].get<double>();
    for (const nlohmann::json& x : j["replicas"]["sizes"]) {
      if (x["found"].get<bool>()) {
        EXPECT_LE(x["tokens_per_s_per_gpu"].get<double>(), v * (1 + 1e-9)) << what << x.dump();
      }
      if (x["gpus_per_instance"].get<int>() == per) {
        EXPECT_TRUE(x["found"].get<bool>()) << what;
      }
    }
    std::vector<std::string> eval = {"eval", "--json", "--strategy", b["strategy"].get<std::string>()};
    eval.insert(eval.end(), problem.begin(), problem.end());
    eval[std::find(eval.begin(), eval.end(), "--gpus") - eval.begin() + 1] = std::to_string(per);
    const Result e = RunL2s(eval);
    ASSERT_EQ(e.code, 0) << what << ": " << e.err;
    EXPECT_NEAR(nlohmann::json::parse(e.out)["tokens_per_s_per_gpu"].get<double>(), v, 5e-3 * v)
        << what;
  }
  EXPECT_GE(checked, 4);
  EXPECT_GE(replicated, 1);
}

}  // namespace
