// `l2s plan` end to end through the built binary (L2S_BIN): the true default run and its JSON
// contract, the recommendation never below the Megatron heuristic, one-line errors with their
// exit codes, and Ctrl-C (SIGINT to a child running a long search: exit 130 with the best plan so
// far). Also the progress line (src/cli/progress.h). Nothing here asserts on timing.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/pareto_report.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "hw/hw.h"
#include "model/presets.h"
#include "strategy/strategy.h"

#include "run_l2s.h"

namespace {

namespace fs = std::filesystem;

using l2s_cli_test::Result;
using l2s_cli_test::Slurp;
using l2s_cli_test::Spawn;
using l2s_cli_test::TempPath;
using l2s_cli_test::Wait;

Result RunL2s(const std::vector<std::string>& args) { return l2s_cli_test::RunL2s(args, "l2s_plan"); }

int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

nlohmann::json ParseJson(const std::string& s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << s.substr(0, 2000);
  return j;
}

double Num(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : -1.0; }

// The default problem, as JSON: every field of the contract, a valid strategy, and a
// recommendation at least as good as the Megatron heuristic's on the same problem.
TEST(PlanCli, TrueDefaultJson) {
  const Result r = RunL2s({"plan", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_TRUE(j.is_object());
  // Problem: gpt-moe-1.6t, decode at 16k context on 1,024 H100s.
  EXPECT_EQ(j["problem"]["model"], "gpt-moe-1.6t");
  EXPECT_EQ(j["problem"]["gpu"], "h100");
  EXPECT_EQ(j["problem"]["gpus"], 1024);
  EXPECT_EQ(j["problem"]["mode"], "decode");
  EXPECT_EQ(j["problem"]["lengths"]["context"], 16384);
  EXPECT_EQ(j["searcher"], "local");
  EXPECT_EQ(j["seed"], 0);
  EXPECT_EQ(j["budget"], 4000);
  // No --engine: the plan is the fastest engine's, whose space the oracle solves within its
  // bound - the oracle runs in the searcher's place (a portfolio), its calls not the budget's.
  EXPECT_EQ(j["searcher_spec"], "oracle");
  EXPECT_GT(Num(j["calls"]), 0);
  EXPECT_NE(j["best"]["engine"], "ideal");
  EXPECT_EQ(j["best"]["engine_chosen_by"], "fastest");
  EXPECT_EQ(j["best"]["launchable"], true);
  EXPECT_EQ(j["best"]["found_by"], "oracle");
  EXPECT_GE(Num(j["wall_s"]), 0);
  EXPECT_EQ(j["interrupted"], false);

  ASSERT_TRUE(j["baselines"]["megatron"].is_object());
  const double megatron = Num(j["baselines"]["megatron"]["tokens_per_s_per_gpu"]);
  EXPECT_GT(megatron, 0);
  ASSERT_TRUE(j["baselines"]["default"].is_object());
  EXPECT_GT(Num(j["baselines"]["default"]["tokens_per_s_per_gpu"]), 0);
  ASSERT_TRUE(j["oracle"].is_object());
  EXPECT_TRUE(j["oracle"].contains("tokens_per_s_per_gpu"));
  EXPECT_TRUE(j["oracle"]["tokens_per_s_per_gpu"].is_null() ||
              j["oracle"]["tokens_per_s_per_gpu"].is_number());

  // The plan (the best of everything evaluated), with every field; the searcher's own result in
  // search.best has the same fields.
  ASSERT_TRUE(j["search"]["best"].is_object()) << "the rl searcher found no valid strategy";
  for (const char* k : {"strategy", "tokens_per_s_per_gpu", "operators", "breakdown"})
    EXPECT_TRUE(j["search"]["best"].contains(k)) << k;
  const nlohmann::json& best = j["best"];
  ASSERT_TRUE(best.is_object());
  for (const char* k : {"strategy", "tokens_per_s_per_gpu", "tokens_per_s", "ttft_ms", "tpot_ms",
                        "batch", "memory_per_gpu_gib", "breakdown", "operators"})
    EXPECT_TRUE(best.contains(k)) << k;
  l2s::StatusOr<l2s::Strategy> s = l2s::FromText(best["strategy"].get<std::string>(), 1024);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->gpus(), 1024);
  EXPECT_GE(s->batch, 1);
  EXPECT_EQ(best["batch"], s->batch);
  EXPECT_GT(Num(best["tokens_per_s_per_gpu"]), 0);
  // Total = per GPU x 1,024 GPUs.
  EXPECT_NEAR(Num(best["tokens_per_s"]), Num(best["tokens_per_s_per_gpu"]) * 1024,
              1e-6 * Num(best["tokens_per_s"]));
  EXPECT_GT(Num(best["tpot_ms"]), 0);
  EXPECT_GT(Num(best["memory_per_gpu_gib"]), 0);
  EXPECT_LE(Num(best["memory_per_gpu_gib"]), 80.0 + 1e-9);
  // Every operator of the model (all layers MoE, no shared experts: 8 operators) in words.
  ASSERT_TRUE(best["operators"].is_array());
  EXPECT_EQ(best["operators"].size(), 8u);
  for (const auto& op : best["operators"]) {
    EXPECT_FALSE(op["words"].get<std::string>().empty());
    EXPECT_NE(op["words"].get<std::string>().find(op["dim"].get<std::string>()), std::string::npos);
  }

  // Never worse than the Megatron heuristic; a searcher below it is named in a warning.
  ASSERT_TRUE(j["recommended"].is_object());
  const double rec = Num(j["recommended"]["tokens_per_s_per_gpu"]);
  EXPECT_EQ(rec, Num(best["tokens_per_s_per_gpu"]));
  EXPECT_EQ(j["recommended"]["source"], best["found_by"]);
  EXPECT_GE(rec, megatron * (1 - 1e-12));
  EXPECT_GE(rec, Num(j["search"]["best"]["tokens_per_s_per_gpu"]));
  // The plan may be a strategy the search evaluated with its batch refined between the space's
  // options (plan/refine.h): best.batch_refined_from is then the batch it was evaluated at and
  // best.tokens_per_s_per_gpu_before_refinement its value there (at most the search's best).
  // (The oracle in the searcher's place - the engine portfolio - is the search: no warning.)
  if (best["found_by"] == "search" || j["searcher_spec"] == "oracle") {
    EXPECT_TRUE(j["warning"].is_null());
    if (best["batch_refined_from"].is_number()) {
      EXPECT_GT(s->batch, best["batch_refined_from"].get<int>());
      const double before = Num(best["tokens_per_s_per_gpu_before_refinement"]);
      EXPECT_LE(before, Num(j["search"]["best"]["tokens_per_s_per_gpu"]));
      EXPECT_GT(rec, before);
    } else {
      EXPECT_TRUE(best["tokens_per_s_per_gpu_before_refinement"].is_null());
      EXPECT_EQ(rec, Num(j["search"]["best"]["tokens_per_s_per_gpu"]));
      EXPECT_EQ(best["strategy"], j["search"]["best"]["strategy"]);
    }
  } else {
    EXPECT_TRUE(j["warning"].is_string());
  }

  // Launch commands for the four engines.
  for (const char* e : {"vllm", "sglang", "trtllm", "megatron"}) {
    SCOPED_TRACE(e);
    const nlohmann::json& l = j["launch"][e];
    ASSERT_TRUE(l.is_object());
    EXPECT_TRUE(l["command"].is_string());
    EXPECT_TRUE(l["unsupported"].is_array());
    EXPECT_EQ(l["exact"], l["unsupported"].empty());
    ASSERT_TRUE(l.contains("expressible_best"));
    if (l["expressible_best"].is_object()) {
      EXPECT_GT(Num(l["expressible_best"]["tokens_per_s_per_gpu"]), 0);
      EXPECT_TRUE(l["expressible_best"]["strategy"].is_string());
    }
  }
  EXPECT_EQ(j["launch"]["vllm"]["command"].get<std::string>().rfind("vllm serve ", 0), 0u);
  // Megatron-LM's arguments express Megatron's dims with any degrees: its best is at least the
  // heuristic's.
  ASSERT_TRUE(j["launch"]["megatron"]["expressible_best"].is_object());
  EXPECT_GE(Num(j["launch"]["megatron"]["expressible_best"]["tokens_per_s_per_gpu"]),
            megatron * (1 - 1e-12));
}

// `l2s` alone runs the same default and prints the readable plan.
TEST(PlanCli, TtftBelowTheRequestOverheadIsOneLine) {
  // With --engine sglang a TTFT SLO under its request overhead fails aggregated and
  // disaggregated plans alike: said once, in one line, exit 1.
  for (const char* serving : {"auto", "agg", "disagg"}) {
    const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                             "--mode", "serve", "--isl", "1024", "--osl", "256", "--engine",
                             "sglang", "--serving", serving, "--slo", "ttft_ms=100,tpot_ms=50"});
    EXPECT_EQ(r.code, 1) << serving;
    EXPECT_NE(r.err.find("the TTFT SLO of 100 ms is below sglang's request overhead, 132.3 ms per "
                         "request outside the GPU steps"),
              std::string::npos)
        << serving << ": " << r.err;
    EXPECT_EQ(r.err.find("TTFT SLO of 100 ms is below", r.err.find("is below") + 1),
              std::string::npos)
        << "said twice: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanCli, NoArgumentsRunsTheDefaultPlan) {
  const Result r = RunL2s({});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gpt-moe-1.6t"), std::string::npos);
  EXPECT_NE(r.out.find("1,024 x h100"), std::string::npos);
  EXPECT_NE(r.out.find("pp="), std::string::npos);
  EXPECT_NE(r.out.find("expert up-projection (moe_ffn1): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokens/s per GPU"), std::string::npos);
  EXPECT_NE(r.out.find("Megatron heuristic"), std::string::npos);
  EXPECT_NE(r.out.find("vllm serve"), std::string::npos);
  EXPECT_NE(r.out.find("python -m sglang.launch_server"), std::string::npos);
  EXPECT_NE(r.out.find("trtllm-serve"), std::string::npos);
  EXPECT_NE(r.out.find("--tensor-model-parallel-size"), std::string::npos);
  EXPECT_EQ(r.err, "");  // stderr is not a terminal: no progress bar
}

// --engine ideal: the paper's unrestricted space, where the searcher runs within its budget.
TEST(PlanCli, IdealEngineRunsTheSearcherWithinItsBudget) {
  const Result r = RunL2s({"plan", "--engine", "ideal", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["searcher"], "local");
  EXPECT_EQ(j["searcher_spec"], "local(patience=80)");
  EXPECT_LE(Num(j["calls"]), 4000);
  EXPECT_GT(Num(j["calls"]), 0);
  EXPECT_EQ(j["best"]["engine"], "ideal");
  EXPECT_TRUE(j["best"]["engine_chosen_by"].is_null());
  EXPECT_TRUE(j["engines"].empty());
}

TEST(PlanCli, OutFileHoldsTheJson) {
  const std::string path = TempPath("l2s_plan_json");
  const Result r = RunL2s({"plan", "--model", "mixtral-8x7b", "--gpus", "8", "--context", "4096",
                        "--search", "sa", "--budget", "300", "--engine", "ideal", "--out", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("l2s plan: mixtral-8x7b"), std::string::npos);
  const nlohmann::json j = ParseJson(Slurp(path));
  fs::remove(path);
  EXPECT_EQ(j["searcher"], "sa");
  EXPECT_EQ(j["problem"]["gpus"], 8);
  EXPECT_LE(Num(j["calls"]), 300);
}

TEST(PlanCli, NoBaselinesSkipsThem) {
  const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--search", "rw",
                        "--budget", "200", "--no-baselines", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_TRUE(j["baselines"]["default"].is_null());
  EXPECT_TRUE(j["oracle"]["tokens_per_s_per_gpu"].is_null());
  EXPECT_EQ(j["oracle"]["status"], "not run");
}

// --engine E (issue 43): the plan searches only what E launches. Its headline is launchable
// (best.engine, best.launchable, launch.E.exact), its figures are those of `l2s eval --engine E`
// of its strategy, and the unrestricted optimum is beside it as `ideal`, never below it.
TEST(PlanCli, EnginePlanIsLaunchableAndEqualsItsEval) {
  for (const char* engine : {"vllm", "sglang", "trtllm"}) {
    const std::vector<std::string> problem = {
        "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "8", "--mode", "serve",
        "--isl", "1024", "--osl", "256", "--slo", "ttft_ms=2000,tpot_ms=50", "--engine", engine};
    std::vector<std::string> plan = {"plan", "--serving", "agg", "--search", "rw",
                                     "--budget", "200", "--json"};
    plan.insert(plan.end(), problem.begin(), problem.end());
    const Result r = RunL2s(plan);
    ASSERT_EQ(r.code, 0) << engine << ": " << r.err;
    const nlohmann::json j = ParseJson(r.out);
    const nlohmann::json& b = j["best"];
    EXPECT_EQ(b["engine"], engine);
    EXPECT_EQ(b["launchable"], true) << engine;
    EXPECT_EQ(j["launch"][engine]["exact"], true) << engine;
    ASSERT_TRUE(j["ideal"].is_object()) << engine;
    EXPECT_GE(Num(j["ideal"]["tokens_per_s_per_gpu"]), Num(b["tokens_per_s_per_gpu"]) * (1 - 1e-9));
    // An MoE model's aggregated plan is replicated (cli/plan_replicas.h): its figures are one
    // instance's, what eval prints on that instance's GPUs.
    const int per = b["gpus_per_instance"].get<int>();
    EXPECT_EQ(b["instances"].get<int>() * per, 8) << engine;
    std::vector<std::string> eval = {"eval", "--json", "--strategy",
                                     b["strategy"].get<std::string>()};
    eval.insert(eval.end(), problem.begin(), problem.end());
    eval[std::find(eval.begin(), eval.end(), "--gpus") - eval.begin() + 1] = std::to_string(per);
    const Result e = RunL2s(eval);
    ASSERT_EQ(e.code, 0) << engine << ": " << e.err;
    const nlohmann::json ej = ParseJson(e.out);
    EXPECT_NEAR(Num(ej["tokens_per_s_per_gpu"]), Num(b["tokens_per_s_per_gpu"]),
                5e-3 * Num(b["tokens_per_s_per_gpu"]))
        << engine;
  }
}

// Without --engine: the table of what each serving engine launches at best, each launchable.
TEST(PlanCli, EnginesTableWithoutEngine) {
  const Result r = RunL2s({"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", "8",
                           "--mode", "serve", "--isl", "1024", "--osl", "256", "--slo",
                           "ttft_ms=2000,tpot_ms=50", "--serving", "agg", "--search", "rw",
                           "--budget", "200", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_EQ(j["engines"].size(), 3u);
  double fastest = 0;
  std::string fastest_engine;
  for (const nlohmann::json& e : j["engines"]) {
    ASSERT_EQ(e["found"], true) << e.dump();
    EXPECT_EQ(e["exact"], true) << e.dump();  // restricted spaces are within the oracle's bound
    EXPECT_GT(Num(e["tokens_per_s_per_gpu"]), 0);
    if (Num(e["tokens_per_s_per_gpu"]) > fastest) {
      fastest = Num(e["tokens_per_s_per_gpu"]);
      fastest_engine = e["engine"].get<std::string>();
    }
  }
  // The headline is the fastest engine's launchable plan, at its table figure; the unrestricted
  // optimum is its headroom.
  const nlohmann::json& b = j["best"];
  EXPECT_EQ(b["engine"], fastest_engine);
  EXPECT_EQ(b["engine_chosen_by"], "fastest");
  EXPECT_EQ(b["launchable"], true);
  EXPECT_EQ(j["launch"][fastest_engine]["exact"], true);
  EXPECT_NEAR(Num(b["tokens_per_s_per_gpu"]), fastest, 1e-9 * fastest);
  ASSERT_TRUE(j["ideal"].is_object());
  EXPECT_GE(Num(j["ideal"]["tokens_per_s_per_gpu"]), fastest * (1 - 1e-9));
  // ... and what `l2s eval --engine E` of its strategy prints on one instance's GPUs.
  const int per = b["gpus_per_instance"].get<int>();
  EXPECT_EQ(b["instances"].get<int>() * per, 8);
  const Result e = RunL2s({"eval", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus", std::to_string(per),
                           "--mode", "serve", "--isl", "1024", "--osl", "256", "--slo",
                           "ttft_ms=2000,tpot_ms=50", "--engine", fastest_engine, "--strategy",
                           b["strategy"].get<std::string>(), "--json"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NEAR(Num(ParseJson(e.out)["tokens_per_s_per_gpu"]), fastest, 5e-3 * fastest);
  // The text table gives each engine's plan in short (degrees and options, then only the dims
  // that differ from Megatron's): a row starts with the JSON strategy's degrees and is shorter.
  std::vector<std::string> text_args = {"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100",
                                        "--gpus", "8", "--mode", "serve", "--isl", "1024", "--osl",
                                        "256", "--slo", "ttft_ms=2000,tpot_ms=50", "--serving",
                                        "agg", "--search", "rw", "--budget", "200"};
  const Result t = RunL2s(text_args);
  ASSERT_EQ(t.code, 0) << t.err;
  for (const nlohmann::json& x : j["engines"]) {
    const std::string full = x["strategy"];
    const size_t at = t.out.find("\n  " + x["engine"].get<std::string>() + " ");
    ASSERT_NE(at, std::string::npos) << t.out;
    const std::string row = t.out.substr(at + 1, t.out.find('\n', at + 1) - at - 1);
    EXPECT_NE(row.find(full.substr(0, full.find(",embed="))), std::string::npos) << row;
    EXPECT_EQ(row.find(full), std::string::npos) << row;
  }
  // Each engine's row carries the command for its own plan: the headline engine's is the launch
  // section's; every other engine's Launch block prints its own row's command (what a user of
  // that engine runs), not the headline translated, and `eval --engine E` of that row's strategy
  // gives the row's figure.
  int others = 0;
  for (const nlohmann::json& x : j["engines"]) {
    const std::string name = x["engine"];
    const std::string command = x["launch"]["command"];
    ASSERT_FALSE(command.empty()) << x.dump();
    if (name == fastest_engine) {
      EXPECT_EQ(command, j["launch"][name]["command"].get<std::string>());
      continue;
    }
    ++others;
    const size_t block = t.out.find("its own plan, its row in the Engines table below (");
    ASSERT_NE(block, std::string::npos) << t.out;
    EXPECT_NE(t.out.find("    command: " + command + "\n"), std::string::npos) << name << "\n" << t.out;
    const Result ev = RunL2s({"eval", "--model", "qwen3-30b-a3b", "--gpu", "h100", "--gpus",
                              std::to_string(per), "--mode", "serve", "--isl", "1024", "--osl",
                              "256", "--slo", "ttft_ms=2000,tpot_ms=50", "--engine", name,
                              "--strategy", x["strategy"].get<std::string>(), "--json"});
    ASSERT_EQ(ev.code, 0) << ev.err;
    EXPECT_NEAR(Num(ParseJson(ev.out)["tokens_per_s_per_gpu"]), Num(x["tokens_per_s_per_gpu"]),
                5e-3 * Num(x["tokens_per_s_per_gpu"]))
        << name;
  }
  EXPECT_EQ(others, 2);
}

// An oracle that cannot finish within --oracle-seconds is reported as skipped, with the command
// that runs it alone.
TEST(PlanCli, OracleOverItsTimeLimitIsSkipped) {
  const Result r = RunL2s({"plan", "--model", "mixtral-8x7b", "--gpus", "8", "--search", "rw",
                           "--budget", "50", "--oracle-seconds", "0.000001", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["oracle"]["status"], "skipped");
  EXPECT_TRUE(j["oracle"]["tokens_per_s_per_gpu"].is_null());
  const std::string hint = j["oracle"]["how_to_run"].get<std::string>();
  EXPECT_NE(hint.find("l2s plan --model mixtral-8x7b --gpu h100 --gpus 8 --mode decode"),
            std::string::npos)
      << hint;
  EXPECT_NE(hint.find("--search oracle"), std::string::npos) << hint;
}

// Bad invocations: each one line on stderr, nothing on stdout, and its exit code.
TEST(PlanCli, BadInvocationsGiveOneLine) {
  const std::string malformed = TempPath("l2s_malformed_config");
  { std::ofstream(malformed) << "{\"num_hidden_layers\": 4,"; }
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"plan", "--bogus"}, 2, "--bogus"},
      {{"plan", "--model", "no-such-model"}, 2, "gpt-moe-1.6t"},  // lists the presets
      {{"plan", "--model", malformed}, 2, malformed},
      {{"plan", "--gpus", "0"}, 2, "--gpus"},
      {{"plan", "--nodes", "0"}, 2, "--nodes"},
      {{"plan", "--gpus", "12", "--gpus-per-node", "8"}, 2,
       "--gpus 12: not a whole number of 8-GPU NVLink domains (1 x 8 + 4)"},
      {{"plan", "--gpus", "16", "--nodes", "3"}, 2, "disagree"},
      {{"plan", "--mode", "training"}, 2, "--mode"},
      {{"plan", "--budget", "0"}, 2, "--budget"},
      {{"plan", "--budget", "-3"}, 2, "--budget"},
      {{"plan", "--seed", "-1"}, 2, "--seed"},
      {{"plan", "--max-batch", "0"}, 2, "--max-batch"},
      {{"plan", "--search", "nope"}, 2, "unknown searcher"},
      {{"plan", "--search", "sa(nope=1)"}, 2, "nope"},
      {{"plan", "--oracle-seconds", "-1"}, 2, "--oracle-seconds"},
      {{"plan", "--slo", "tpot_ms=fast"}, 2, "--slo"},
      {{"plan", "--out", "/nonexistent-dir/plan.json"}, 2, "/nonexistent-dir"},
      // Flags plan would ignore: the chart's without --pareto, a length the mode does not read.
      {{"plan", "--x-scale", "linear"}, 2, "--x-scale shapes the chart of plan --pareto: add --pareto"},
      {{"plan", "--svg", "p.svg"}, 2, "--svg shapes the chart"},
      {{"plan", "--jobs", "4"}, 2, "--jobs sets the threads of plan --pareto: add --pareto"},
      {{"plan", "--pareto", "--jobs", "0"}, 2, "--jobs"},
      {{"plan", "--isl", "512"}, 2, "--isl: decode mode (the default) reads --context"},
      // Impossible requests: exit 1 with the reason.
      {{"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--slo", "tpot_ms=0.001", "--search",
        "rw", "--budget", "100"},
       1, "TPOT"},
      {{"plan", "--model", "llama-3.1-405b", "--gpus", "8", "--search", "rw", "--budget", "100"},
       1, "does not fit"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const std::string& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const Result r = RunL2s(c.args);
    EXPECT_EQ(r.code, c.code) << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("l2s: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 500);
  }
  fs::remove(malformed);
}

// True once `pid` has a handler installed for SIGINT (bit 2 of SigCgt in /proc/PID/status).
bool CatchesSigint(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("SigCgt:", 0) == 0) {
      const unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (mask >> (SIGINT - 1)) & 1ULL;
    }
  return false;
}

TEST(PlanCli, CtrlCPrintsTheBestSoFarAndExits130) {
  if (!fs::exists("/proc/self/status")) GTEST_SKIP() << "needs /proc";
  const std::string out = TempPath("l2s_sigint_out"), err = TempPath("l2s_sigint_err");
  // A search that would run for hours: simulated annealing with 10^8 calls (the largest budget).
  const pid_t pid = Spawn({"plan", "--model", "mixtral-8x7b", "--gpus", "8", "--context", "4096",
                           "--search", "sa", "--budget", "100000000", "--json"},
                          out, err);
  ASSERT_GT(pid, 0);
  // Wait until the handler is installed (the search starts right after), then let it run a bit.
  bool ready = false;
  for (int i = 0; i < 3000 && !ready; ++i) {
    ready = CatchesSigint(pid);
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(ready) << "the child never installed its SIGINT handler";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const Result r = Wait(pid, out, err);
  EXPECT_EQ(r.code, 130) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_GT(Num(j["calls"]), 0);
  EXPECT_LT(Num(j["calls"]), 1e8);
  ASSERT_TRUE(j["best"].is_object()) << "no plan printed";
  EXPECT_TRUE(l2s::FromText(j["best"]["strategy"].get<std::string>(), 8).ok());
}

TEST(ProgressLine, BarCountsAndBest) {
  using l2s::cli::ProgressLine;
  // 250 of 1000 calls = 25%: 2 of 8 bar cells filled.
  EXPECT_EQ(ProgressLine("rl", 250, 1000, 12.346, 3.21, 8),
            "rl [##......] 250/1000 calls (25%)  best 12.35 tok/s/GPU  3.2s");
  EXPECT_EQ(ProgressLine("", 0, 10, 0, 0, 4),
            "[....] 0/10 calls (0%)  no valid strategy yet  0.0s");
  // Budget-free searchers (INT64_MAX budget): calls only.
  EXPECT_EQ(ProgressLine("megatron", 1234, INT64_MAX, 1.5, 75, 8),
            "megatron 1234 calls  best 1.50 tok/s/GPU  1m15s");
}

TEST(ProgressObserver, DeadlineAndInterruptCancel) {
  using l2s::cli::ProgressObserver;
  l2s::cli::ClearInterruptForTest();
  ProgressObserver none({"x", false, 0});
  EXPECT_FALSE(none.Cancelled());
  ProgressObserver soon({"x", false, 1e-9});
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(soon.Cancelled());
  EXPECT_TRUE(soon.deadline_hit());
  EXPECT_FALSE(soon.interrupted());
  // Evaluations reach the sink.
  int seen = 0;
  ProgressObserver sink({"x", false, 0}, [&](const l2s::Strategy&, const l2s::Evaluation&) { ++seen; });
  sink.OnEvaluation(l2s::Strategy{}, l2s::Evaluation{});
  EXPECT_EQ(seen, 1);
  // SIGINT through the installed handler.
  l2s::cli::InstallSigintHandler();
  ::raise(SIGINT);
  EXPECT_TRUE(l2s::cli::InterruptRequested());
  EXPECT_TRUE(none.Cancelled());
  EXPECT_TRUE(none.interrupted());
  l2s::cli::ClearInterruptForTest();
  ::signal(SIGINT, SIG_DFL);
}

// `l2s plan --pareto` (docs/PLAN.md "--pareto"): serve mode by default, the front in `pareto`
// with every field and the strategy of each point, monotone (tokens/s per user up, per GPU
// down), every point meeting its TPOT limit, and 16 limits in the sweep; prefill is a usage error.
// Serve mode with --serving auto (the default): a second series, the disaggregated planner's best
// under each limit of the same grid, each point meeting its limit, each series' front monotone,
// and the disaggregated points naming both pools. Every point of both series is a point of the
// spaces' batch grid (powers of two): the header says each point is the optimum under its limit
// on that grid, and the two series compare alike (plan's own answer refines its batches,
// docs/PLAN.md; the sweep's disaggregated series did too, by mistake, between the nineteenth and
// the twentieth passes: batches 246 and 492 on this problem).
// Issue 46 item 4: a third series, what the fastest engine of the engine table (vLLM on this
// problem) launches under each limit, on the same batch grid; the chart goes to --svg, said on
// stderr and in the JSON.
TEST(PlanCli, ParetoAddsTheDisaggregatedSeries) {
  const std::string svg = TempPath("l2s_pareto_cli") + ".svg";
  fs::remove(svg);
  const Result r = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8", "--isl",
                           "1024", "--osl", "256", "--budget", "300", "--json", "--svg", svg});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_EQ(j["sweep"]["series"].size(), 3u);
  EXPECT_EQ(j["sweep"]["series"][0]["name"], "aggregated");
  EXPECT_EQ(j["sweep"]["series"][1]["name"], "disaggregated");
  EXPECT_EQ(j["sweep"]["series"][2]["name"], "vLLM launchable");
  EXPECT_EQ(j["svg"], svg);
  EXPECT_NE(r.err.find("l2s plan --pareto: wrote " + svg), std::string::npos) << r.err;
  const std::string picture = Slurp(svg);
  fs::remove(svg);
  for (const char* label : {"aggregated, paper&apos;s space (TPOT sweep",
                            "disaggregated, paper&apos;s space (TPOT sweep",
                            "vLLM launchable (TPOT sweep", "class=\"legend-box\"",
                            "tokens/s per user (1000 / TPOT ms) (log scale)"})
    EXPECT_NE(picture.find(label), std::string::npos) << label;
  // The launchable series never beats the unrestricted one by more than the engine's factor.
  const double k = l2s::Simulator::EngineFactor("vllm");
  const nlohmann::json& agg_pts = j["sweep"]["series"][0]["points"];
  const nlohmann::json& eng_pts = j["sweep"]["series"][2]["points"];
  for (const nlohmann::json& e : eng_pts)
    for (const nlohmann::json& a : agg_pts)
      if (a["tpot_limit_ms"] == e["tpot_limit_ms"]) {
        EXPECT_LE(Num(e["tokens_per_s_per_gpu"]), Num(a["tokens_per_s_per_gpu"]) * k * (1 + 1e-9));
      }
  std::map<std::string, std::pair<double, double>> prev;  // series -> (user, gpu) of the last point
  int disagg = 0;
  for (const nlohmann::json& p : j["pareto"]) {
    const std::string series = p["series"].get<std::string>();
    EXPECT_LE(Num(p["tpot_ms"]), Num(p["tpot_limit_ms"]) * (1 + 1e-9));
    const std::string text = p["strategy"].get<std::string>();
    int batches = 0;
    for (size_t at = text.find("batch="); at != std::string::npos;
         at = text.find("batch=", at + 6)) {
      const long b = std::strtol(text.c_str() + at + 6, nullptr, 10);
      EXPECT_TRUE(b > 0 && (b & (b - 1)) == 0) << series << ": " << text;
      ++batches;
    }
    EXPECT_EQ(batches, series == "disaggregated" ? 2 : 1) << text;
    if (series == "disaggregated") {
      ++disagg;
      EXPECT_NE(text.find("prefill "), std::string::npos) << text;
      EXPECT_NE(text.find("; decode "), std::string::npos) << text;
    }
    auto it = prev.find(series);
    if (it != prev.end()) {
      EXPECT_GT(Num(p["tokens_per_s_per_user"]), it->second.first) << series;
      EXPECT_LT(Num(p["tokens_per_s_per_gpu"]), it->second.second) << series;
    }
    prev[series] = {Num(p["tokens_per_s_per_user"]), Num(p["tokens_per_s_per_gpu"])};
  }
  EXPECT_GE(disagg, 1);
}

TEST(PlanCli, ParetoSweepsTheTpotLimit) {
  // --serving agg --engine ideal: the aggregated series alone (the default, auto, adds the
  // disaggregated one, and no --engine the fastest engine's: ParetoAddsTheDisaggregatedSeries);
  // --svg none: no chart.
  const Result r = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8", "--isl",
                           "1024", "--osl", "256", "--serving", "agg", "--engine", "ideal",
                           "--json", "--svg", "none"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["problem"]["mode"], "serve");
  ASSERT_TRUE(j["pareto"].is_array());
  ASSERT_GE(j["pareto"].size(), 2u);
  double prev_user = 0, prev_gpu = 1e300;
  for (const nlohmann::json& p : j["pareto"]) {
    for (const char* k : {"series", "tpot_limit_ms", "tokens_per_s_per_gpu",
                          "tokens_per_s_per_user", "ttft_ms", "tpot_ms", "strategy", "found_by",
                          "exact"})
      EXPECT_TRUE(p.contains(k)) << k;
    EXPECT_EQ(p["series"], "aggregated");
    EXPECT_TRUE(l2s::FromText(p["strategy"].get<std::string>()).ok()) << p["strategy"];
    EXPECT_NEAR(Num(p["tokens_per_s_per_user"]), 1000 / Num(p["tpot_ms"]), 1e-9);
    EXPECT_LE(Num(p["tpot_ms"]), Num(p["tpot_limit_ms"]) * (1 + 1e-9));
    EXPECT_GT(Num(p["tokens_per_s_per_user"]), prev_user);
    EXPECT_LT(Num(p["tokens_per_s_per_gpu"]), prev_gpu);
    prev_user = Num(p["tokens_per_s_per_user"]);
    prev_gpu = Num(p["tokens_per_s_per_gpu"]);
  }
  EXPECT_EQ(j["sweep"]["tpot_limits_ms"].size(), 16u);
  EXPECT_EQ(j["sweep"]["series"].size(), 1u);
  EXPECT_EQ(j["sweep"]["series"][0]["name"], "aggregated");
  EXPECT_TRUE(j["svg"].is_null());
  EXPECT_EQ(r.err.find("wrote"), std::string::npos) << r.err;
  // The readable table.
  const Result t = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8", "--isl",
                           "1024", "--osl", "256", "--serving", "agg", "--svg", "none"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("points on the front"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("TPOT limits: 16 from"), std::string::npos) << t.out;
  const Result bad = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8",
                             "--mode", "prefill"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(CountLines(bad.err), 1) << bad.err;
  EXPECT_NE(bad.err.find("--pareto"), std::string::npos) << bad.err;
  // A chart that cannot be written: one line, exit 2, before the sweep.
  const Result nodir = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8",
                               "--svg", "/nonexistent-l2s-dir/p.svg"});
  EXPECT_EQ(nodir.code, 2);
  EXPECT_EQ(CountLines(nodir.err), 1) << nodir.err;
  EXPECT_NE(nodir.err.find("--svg /nonexistent-l2s-dir/p.svg: directory /nonexistent-l2s-dir does "
                           "not exist"),
            std::string::npos)
      << nodir.err;
  // A TPOT SLO no plan meets: one line saying how fast the fastest plan is, exit 1.
  const Result slo = RunL2s({"plan", "--pareto", "--model", "llama-3.1-8b", "--gpus", "8",
                             "--slo", "tpot_ms=0.5"});
  EXPECT_EQ(slo.code, 1);
  EXPECT_EQ(CountLines(slo.err), 1) << slo.err;
  EXPECT_NE(slo.err.find("no strategy meets the TPOT SLO of 0.5 ms"), std::string::npos) << slo.err;
}

// A second series (the disaggregated planner's, here a stand-in at 90% of the aggregated
// throughput per limit) goes through RunParetoPlan's hook over the same limits: both series'
// fronts are in `pareto`, each point naming its series, and the SVG draws one staircase each.
TEST(ParetoReport, SecondSeriesThroughTheHook) {
  l2s::Problem p;
  p.model = *l2s::ModelPreset("llama-3.1-8b");
  p.cluster = *l2s::MakeCluster("h100", 8, 8);
  p.workload.mode = l2s::Mode::kServe;
  p.workload.isl = 1024;
  p.workload.osl = 256;
  p.workload.tpot_ms = 40;  // the chart shades below 1000 / 40 = 25 tokens/s per user
  l2s::cli::ParetoPlanArgs a;
  a.out = TempPath("l2s_pareto_hook");
  a.svg = TempPath("l2s_pareto_hook") + ".svg";
  a.engine = "sglang";  // the engine-launchable series: SGLang's, after the hook's
  size_t limits_seen = 0;
  a.more_series = [&](const std::vector<double>& limits, l2s::Observer*) {
    limits_seen = limits.size();
    return std::vector<l2s::ParetoSeries>{l2s::SweepTpot("disaggregated", limits, [](double l) {
      l2s::SweepAnswer ans;
      l2s::ParetoPoint pt;
      pt.tpot_ms = l;
      pt.tokens_per_s_per_user = l2s::TokensPerUser(l);
      pt.tokens_per_s_per_gpu = 10 * l;  // more throughput at looser limits
      pt.strategy = "prefill x2 + decode x1";
      ans.point = pt;
      return ans;
    })};
  };
  ::testing::internal::CaptureStdout();
  const int code = l2s::cli::RunParetoPlan(p, a);
  const std::string text = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0);
  EXPECT_EQ(limits_seen, 16u);
  EXPECT_NE(text.find("disaggregated: 16 of 16 points on the front"), std::string::npos) << text;
  // Each series says its space: with --engine sglang the aggregated series is the paper's space
  // under SGLang's scheduler, the disaggregated one SGLang's pools.
  EXPECT_NE(text.find("  space: every layout of the paper's space, under SGLang's scheduler: what "
                      "a custom engine could reach\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  space: prefill and decode pools as SGLang launches them\n"),
            std::string::npos);
  EXPECT_NE(text.find("SGLang launchable: "), std::string::npos);
  const nlohmann::json j = ParseJson(Slurp(a.out));
  fs::remove(a.out);
  int agg = 0, dis = 0;
  for (const nlohmann::json& pt : j["pareto"]) {
    agg += pt["series"] == "aggregated";
    dis += pt["series"] == "disaggregated";
  }
  EXPECT_GE(agg, 2);
  EXPECT_EQ(dis, 16);
  ASSERT_EQ(j["sweep"]["series"].size(), 3u);
  EXPECT_EQ(j["sweep"]["series"][2]["name"], "SGLang launchable");
  const std::string picture = Slurp(a.svg);
  fs::remove(a.svg);
  EXPECT_NE(picture.find("violates the SLO: TPOT &gt; 40 ms (&lt; 25 tok/s/user)"),
            std::string::npos);
  EXPECT_NE(picture.find("SGLang launchable (TPOT sweep"), std::string::npos);
  // The legend names each series' space, as the table does.
  EXPECT_NE(picture.find("aggregated, paper&apos;s space (TPOT sweep"), std::string::npos);
  EXPECT_NE(picture.find("disaggregated, SGLang&apos;s pools (TPOT sweep"), std::string::npos);
  l2s::cli::Plot plot;
  std::vector<l2s::ParetoSeries> series(2);
  series[0].name = "aggregated";
  series[1].name = "disaggregated";
  series[0].front = {l2s::ParetoPoint{}};
  l2s::cli::AddParetoSeries(series, &plot);
  ASSERT_EQ(plot.series.size(), 4u);  // a line and its dots per series
  EXPECT_EQ(plot.series[0].name, "aggregated (TPOT sweep, 1 on the front)");
  EXPECT_EQ(plot.series[2].name, "disaggregated (TPOT sweep, 0 on the front)");
  EXPECT_NE(plot.series[0].color, plot.series[2].color);
}

// --emit DIR writes the launch files of the plan for --engine; --model-id replaces the model
// argument; a DIR that cannot be made is one line and exit code 2 before any search.
TEST(PlanCli, EmitWritesTheLaunchFiles) {
  const std::string dir = TempPath("l2s_emit_cli");
  fs::remove_all(dir);
  const Result r = RunL2s({"plan", "--model", "mixtral-8x7b", "--gpus", "16", "--mode", "serve",
                           "--isl", "1024", "--osl", "256", "--engine", "sglang", "--serving", "agg",
                           "--budget", "200", "--oracle-seconds", "0", "--emit", dir, "--model-id",
                           "acme/mixtral-ft"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for SGLang"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(fs::path(dir) / "DEPLOY.md"));
  ASSERT_TRUE(fs::exists(fs::path(dir) / "node-1.sh"));
  const std::string script = Slurp((fs::path(dir) / "node-1.sh").string());
  EXPECT_NE(script.find("python -m sglang.launch_server --model-path acme/mixtral-ft "),
            std::string::npos)
      << script;
  // The printed commands load it too (they once printed the preset's repo id beside files that
  // load --model-id), and without --emit it is not ignored.
  EXPECT_NE(r.out.find("command: python -m sglang.launch_server --model-path acme/mixtral-ft "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("mistralai/Mixtral-8x7B"), std::string::npos) << r.out;
  const Result printed =
      RunL2s({"plan", "--model", "mixtral-8x7b", "--gpus", "16", "--mode", "serve", "--isl",
              "1024", "--osl", "256", "--engine", "sglang", "--serving", "agg", "--budget", "200",
              "--oracle-seconds", "0", "--model-id", "acme/mixtral-ft", "--json"});
  ASSERT_EQ(printed.code, 0) << printed.err;
  EXPECT_NE(printed.out.find("--model-path acme/mixtral-ft "), std::string::npos);
  EXPECT_EQ(printed.out.find("mistralai/Mixtral-8x7B"), std::string::npos);
  // A frontier has no one plan to launch: --emit and --model-id with --pareto are errors (and
  // make no directory).
  fs::remove_all(dir);
  for (const char* flag : {"--emit", "--model-id"}) {
    const Result pareto = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--pareto",
                                  "--svg", "none", flag, dir});
    EXPECT_EQ(pareto.code, 2) << flag;
    EXPECT_EQ(pareto.err, fmt::format("l2s: error: {} is for one plan's launch commands: --pareto "
                                      "answers with a frontier of plans (plan one of its points "
                                      "with --slo tpot_ms=X and {})\n",
                                      flag, flag));
  }
  EXPECT_FALSE(fs::exists(dir));
  const std::string file = TempPath("l2s_emit_file");
  std::ofstream(file) << "x";
  const Result bad = RunL2s({"plan", "--model", "mixtral-8x7b", "--gpus", "8", "--emit", file});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--emit"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  fs::remove(file);
}

// A disaggregated plan on one 8-GPU node (its KV priced over NVLink) is emitted as one node's
// script that starts both pools on disjoint GPUs, also with a fixed --prefill-gpus split, whose
// KV then crosses NVLink too; across nodes a fixed split gives each pool nodes of its own.
TEST(PlanCli, EmittedDisaggregatedPoolsStartWhereTheyWerePriced) {
  const std::vector<std::string> problem = {
      "plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--mode", "serve", "--isl", "2048",
      "--osl", "256", "--slo", "ttft_ms=500,tpot_ms=15", "--engine", "vllm", "--serving",
      "disagg", "--budget", "200"};
  auto run = [&](std::vector<std::string> extra, const std::string& dir) {
    std::vector<std::string> args = problem;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--emit", dir});
    fs::remove_all(dir);
    return RunL2s(args);
  };
  for (const std::vector<std::string>& split :
       {std::vector<std::string>{}, std::vector<std::string>{"--prefill-gpus", "4"}}) {
    const std::string dir = TempPath("l2s_emit_one_node");
    std::vector<std::string> extra = {"--gpus", "8"};
    extra.insert(extra.end(), split.begin(), split.end());
    const Result r = run(extra, dir);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("over NVLink"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(fs::path(dir) / "node-1.sh")) << r.out;
    EXPECT_FALSE(fs::exists(fs::path(dir) / "node-2.sh"));
    EXPECT_FALSE(fs::exists(fs::path(dir) / "prefill-node-1.sh"));
    const std::string script = Slurp((fs::path(dir) / "node-1.sh").string());
    EXPECT_NE(script.find("kv_producer"), std::string::npos) << script;
    EXPECT_NE(script.find("kv_consumer"), std::string::npos) << script;
    fs::remove_all(dir);
  }
  const std::string dir = TempPath("l2s_emit_two_pools");
  const Result r = run({"--gpus", "16", "--prefill-gpus", "8"}, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("over NVLink"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(dir) / "prefill-node-1.sh"));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "decode-node-1.sh"));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "node-1.sh"));
  fs::remove_all(dir);
}

// --engine dynamo+E (issue 43: launch artifacts for the named engine): the aggregated plan's
// launch starts with Dynamo's frontend and workers of E (a dense model's replicas one worker
// each), --emit writes Dynamo's files; a disaggregated plan lists Dynamo's launch first, with E's
// workers, and its `best` names the engine and says it is launchable.
TEST(PlanCli, DynamoPlansLaunchDynamoWorkersOfTheirEngine) {
  const std::vector<std::string> problem = {
      "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--mode", "serve", "--isl",
      "2048", "--osl", "256", "--slo", "ttft_ms=1000,tpot_ms=40", "--budget", "300"};
  const std::string dir = TempPath("l2s_emit_dynamo");
  fs::remove_all(dir);
  std::vector<std::string> agg = {"plan", "--engine", "dynamo+vllm", "--serving", "agg", "--json",
                                  "--emit", dir};
  agg.insert(agg.end(), problem.begin(), problem.end());
  const Result a = RunL2s(agg);
  ASSERT_EQ(a.code, 0) << a.err;
  const nlohmann::json ja = ParseJson(a.out);
  EXPECT_EQ(ja["best"]["engine"], "dynamo+vllm");
  const nlohmann::json& d = ja["launch"]["dynamo"];
  ASSERT_TRUE(d.is_object()) << ja["launch"].dump();
  EXPECT_EQ(d["backend"], "vllm");
  EXPECT_EQ(d["exact"], true);
  EXPECT_EQ(d["frontend"], "python -m dynamo.frontend --http-port 8000");
  const std::string worker = d["worker"]["command"].get<std::string>();
  EXPECT_EQ(worker.rfind("python -m dynamo.vllm --model meta-llama/", 0), 0u) << worker;
  EXPECT_EQ(worker.find("--port"), std::string::npos) << worker;
  EXPECT_EQ(worker.find("--data-parallel-size"), std::string::npos) << worker;
  // Every GPU of every instance runs in exactly one worker.
  EXPECT_EQ(d["workers"].get<int>() * d["gpus_per_worker"].get<int>(),
            ja["best"]["instances"].get<int>() * ja["best"]["gpus_per_instance"].get<int>())
      << d.dump();
  ASSERT_TRUE(fs::exists(fs::path(dir) / "frontend.sh"));
  EXPECT_NE(Slurp((fs::path(dir) / "node-1.sh").string()).find("python -m dynamo.vllm"),
            std::string::npos);
  fs::remove_all(dir);

  std::vector<std::string> disagg = {"plan", "--engine", "dynamo+trtllm", "--serving", "disagg",
                                     "--json"};
  disagg.insert(disagg.end(), problem.begin(), problem.end());
  const Result r = RunL2s(disagg);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["best"]["engine"], "dynamo+trtllm");
  EXPECT_EQ(j["best"]["launchable"], true);
  ASSERT_TRUE(j["launch"].is_object());
  EXPECT_EQ(j["launch"].begin().key(), "dynamo");  // the named engine's launch first
  EXPECT_EQ(j["launch"]["dynamo"]["backend"], "trtllm");
  EXPECT_EQ(j["launch"]["dynamo"]["exact"], true);
  for (const nlohmann::json& proc : j["launch"]["dynamo"]["processes"])
    if (proc["role"] != "router") {
      EXPECT_NE(proc["command"].get<std::string>().find("python -m dynamo.trtllm"),
                std::string::npos)
          << proc.dump();
    }
  // Without --engine the disaggregated best still says what it is planned for.
  std::vector<std::string> ideal = {"plan", "--engine", "ideal", "--serving", "disagg", "--json"};
  ideal.insert(ideal.end(), problem.begin(), problem.end());
  const Result ri = RunL2s(ideal);
  ASSERT_EQ(ri.code, 0) << ri.err;
  EXPECT_EQ(ParseJson(ri.out)["best"]["engine"], "ideal");
  EXPECT_TRUE(ParseJson(ri.out)["best"]["launchable"].is_boolean());
}

}  // namespace

namespace {

// `plan --gpu a,b` (issue 46): each row is that GPU type's own plan (`plan --gpu G --json`), its
// cost at that GPU type's price; the fastest and the cheapest are named; a price list of the
// wrong length is one line and exit 2.
TEST(PlanCli, HardwareTableRowsAreEachGpusOwnPlan) {
  const std::vector<std::string> common = {"plan", "--model", "llama-3.1-8b", "--gpus", "1",
                                           "--mode", "decode", "--context", "4096", "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const Result table = RunL2s(with({"--gpu", "h100,h200", "--price-per-gpu-hour", "2,4"}));
  ASSERT_EQ(table.code, 0) << table.err;
  const nlohmann::json t = nlohmann::json::parse(table.out);
  ASSERT_EQ(t["hardware"].size(), 2u);
  const char* gpus[] = {"h100", "h200"};
  const char* prices[] = {"2", "4"};
  double tps[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    const Result one = RunL2s(with({"--gpu", gpus[k], "--price-per-gpu-hour", prices[k]}));
    ASSERT_EQ(one.code, 0) << one.err;
    const nlohmann::json o = nlohmann::json::parse(one.out);
    const nlohmann::json& row = t["hardware"][k];
    EXPECT_EQ(row["gpu"], gpus[k]);
    tps[k] = o["best"]["tokens_per_s_per_gpu"];
    EXPECT_DOUBLE_EQ(row["tokens_per_s_per_gpu"].get<double>(), tps[k]);
    EXPECT_EQ(row["strategy"], o["best"]["strategy"]);
    EXPECT_DOUBLE_EQ(row["cost"]["usd_per_mtok_output"].get<double>(),
                     o["best"]["cost"]["usd_per_mtok_output"].get<double>());
    EXPECT_DOUBLE_EQ(row["cost"]["price_per_gpu_hour"].get<double>(), k == 0 ? 2.0 : 4.0);
  }
  EXPECT_EQ(t["fastest_per_gpu"], tps[1] > tps[0] ? "h200" : "h100");
  const double usd0 = t["hardware"][0]["cost"]["usd_per_mtok_output"];
  const double usd1 = t["hardware"][1]["cost"]["usd_per_mtok_output"];
  EXPECT_EQ(t["cheapest_per_output_token"], usd1 < usd0 ? "h200" : "h100");

  // The text table: a decode workload has no TTFT ("n/a", as plan prints it), not 0.0 ms.
  const Result text = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "1", "--mode", "decode",
                              "--context", "4096", "--gpu", "h100,h200"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find(fmt::format("  h100     {:>10.2f}       n/a", tps[0])), std::string::npos)
      << text.out;
  // Its plan column is the degrees and options of the JSON's strategy, without the operator dims
  // (the engine's own layout): the text up to ",embed=".
  const std::string full = t["hardware"][0]["strategy"];
  ASSERT_NE(full.find(",embed="), std::string::npos) << full;
  EXPECT_NE(text.out.find(full.substr(0, full.find(",embed=")) + "\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("attn_qkv="), std::string::npos) << text.out;
  const Result bad = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "1", "--gpu", "h100,h200",
                             "--price-per-gpu-hour", "2,3,4"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--price-per-gpu-hour 2,3,4: 3 prices for 2 GPU types"), std::string::npos)
      << bad.err;
  const Result unknown = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "1", "--gpu", "h100,nosuch"});
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  // A "-" of tok/J is said: the hardware reference states no board power for MI325X.
  const Result amd = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "1", "--mode", "decode",
                             "--context", "4096", "--gpu", "h100,mi325x"});
  ASSERT_EQ(amd.code, 0) << amd.err;
  EXPECT_NE(amd.out.find("  tok/J -: no board power stated for mi325x"), std::string::npos)
      << amd.out;
  EXPECT_EQ(text.out.find("tok/J -:"), std::string::npos) << text.out;
}

// `plan --gpu a,b --pareto` (issue 46 items 3 and 4): one front per GPU type, each exactly that
// type's own `plan --gpu G --pareto` sweep (the front of all its series), each point priced at
// its type's price: $/Mtok = price / 3600 / (tokens/s per GPU) x 1e6 (plan/cost.h); the chart's
// y axis is that cost when every type is priced, else tokens/s per GPU.
TEST(PlanCli, HardwareParetoFrontsArePricedPerGpuType) {
  const std::string svg = TempPath("l2s_hw_pareto") + ".svg";
  fs::remove(svg);
  const std::vector<std::string> common = {"plan", "--model", "llama-3.1-8b", "--gpus", "8",
                                           "--isl", "1024", "--osl", "256", "--serving", "agg",
                                           "--engine", "ideal", "--pareto", "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const Result r = RunL2s(with({"--gpu", "h100,h200", "--price-per-gpu-hour", "2,4", "--svg", svg}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["y"], "usd_per_mtok_output");
  EXPECT_EQ(j["svg"], svg);
  ASSERT_EQ(j["hardware_pareto"].size(), 2u);
  const char* gpus[] = {"h100", "h200"};
  const double prices[] = {2, 4};
  for (int k = 0; k < 2; ++k) {
    const nlohmann::json& row = j["hardware_pareto"][k];
    EXPECT_EQ(row["gpu"], gpus[k]);
    ASSERT_GE(row["front"].size(), 2u);
    // The same front as the GPU type's own sweep (one series here: aggregated).
    const Result one = RunL2s(with({"--gpu", gpus[k], "--svg", "none"}));
    ASSERT_EQ(one.code, 0) << one.err;
    const nlohmann::json o = ParseJson(one.out);
    ASSERT_EQ(o["pareto"].size(), row["front"].size());
    double prev_user = 0;
    for (size_t i = 0; i < row["front"].size(); ++i) {
      const nlohmann::json& p = row["front"][i];
      EXPECT_DOUBLE_EQ(Num(p["tokens_per_s_per_gpu"]), Num(o["pareto"][i]["tokens_per_s_per_gpu"]));
      EXPECT_NEAR(Num(p["usd_per_mtok_output"]),
                  prices[k] / 3600.0 / Num(p["tokens_per_s_per_gpu"]) * 1e6, 1e-9);
      EXPECT_GT(Num(p["tokens_per_s_per_user"]), prev_user);
      prev_user = Num(p["tokens_per_s_per_user"]);
    }
  }
  const std::string picture = Slurp(svg);
  fs::remove(svg);
  for (const char* label : {"h100 at $2/GPU-h", "h200 at $4/GPU-h", "$ per million output tokens",
                            "class=\"legend-box\""})
    EXPECT_NE(picture.find(label), std::string::npos) << label;
  // No price: throughput per GPU on y, no cost.
  const Result free = RunL2s(with({"--gpu", "h100,h200", "--svg", "none"}));
  ASSERT_EQ(free.code, 0) << free.err;
  const nlohmann::json f = ParseJson(free.out);
  EXPECT_EQ(f["y"], "tokens_per_s_per_gpu");
  EXPECT_TRUE(f["svg"].is_null());
  EXPECT_TRUE(f["hardware_pareto"][0]["front"][0]["usd_per_mtok_output"].is_null());
}

}  // namespace


// Tokens per joule keep two significant digits below 0.1 (the README default's 0.031; a prefill
// pool's first tokens, 0.0050), two decimals above.
TEST(PlanCli, SmallFiguresKeepTwoSignificantDigits) {
  EXPECT_EQ(l2s::cli::TwoDigits(0.0308), "0.031");
  EXPECT_EQ(l2s::cli::TwoDigits(0.00504), "0.0050");
  EXPECT_EQ(l2s::cli::TwoDigits(0.93), "0.93");
  EXPECT_EQ(l2s::cli::TwoDigits(12.3), "12.30");
  EXPECT_EQ(l2s::cli::TwoDigits(0.0), "0.00");
  EXPECT_EQ(l2s::cli::TwoDigits(-0.0308), "-0.031");
}

// A prefill's hardware table counts prompt tokens in its cost columns (its output tokens are the
// first tokens, one per prompt), as its cost line does.
TEST(PlanCli, PrefillHardwareTableCountsPromptTokens) {
  const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpu", "h100,h200", "--gpus", "2",
                           "--mode", "prefill", "--isl", "4096", "--price-per-gpu-hour", "2,3",
                           "--budget", "100"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("$/Mtok in   tok/J in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cheapest per prompt token: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tok/J out"), std::string::npos) << r.out;
}

// With a traffic each GPU type's row is its traffic pick: the simulated P99s beside the steady
// state, and priced (the pick carries its cost, which it once lacked: "-" in the cost columns).
TEST(PlanCli, HardwareTableWithATrafficShowsEachPicksPercentiles) {
  const std::vector<std::string> args = {
      "plan", "--model", "llama-3.1-8b", "--gpus", "4", "--isl", "4000", "--osl", "300",
      "--engine", "vllm", "--rate", "5", "--requests", "300", "--seed", "1", "--slo",
      "p99_ttft_ms=1500,p99_tpot_ms=30", "--budget", "200", "--serving", "agg",
      "--price-per-gpu-hour", "2,3", "--gpu", "h100,h200"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const Result r = RunL2s(json_args);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const char* gpus[] = {"h100", "h200"};
  for (size_t k = 0; k < 2; ++k) {
    const auto& row = j["hardware"][k];
    std::vector<std::string> one(args.begin(), args.end() - 4);
    one.insert(one.end(), {"--price-per-gpu-hour", k == 0 ? "2" : "3", "--gpu", gpus[k], "--json"});
    const Result o = RunL2s(one);
    ASSERT_EQ(o.code, 0) << o.err;
    const auto p = nlohmann::json::parse(o.out);
    EXPECT_EQ(row["p99_ttft_ms"], p["best"]["serve"]["ttft_ms"]["p99"]);
    EXPECT_EQ(row["p99_tpot_ms"], p["best"]["serve"]["tpot_ms"]["p99"]);
    EXPECT_TRUE(row["cost"]["usd_per_mtok_output"].is_number()) << row;
    EXPECT_EQ(row["cost"], p["best"]["cost"]);
  }
  const Result t = RunL2s(args);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("  TPOT ms  p99 TTFT  p99 TPOT  $/Mtok out"), std::string::npos) << t.out;
}

// --emit DIR with several GPU types: each type's plan files in DIR/<gpu>, each the files of that
// row's plan (the children once all wrote into DIR, the last one's files left); --out FILE the
// table's JSON.
TEST(PlanCli, HardwareEmitWritesEachGpuTypesFilesApart) {
  const std::string dir = TempPath("l2s_hw_emit");
  fs::remove_all(dir);
  const Result r = RunL2s({"plan", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                           "--engine", "vllm", "--budget", "100", "--gpu", "h100,h200", "--emit",
                           dir, "--out", dir + ".json", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // --out holds the comparison's JSON (it once held whichever child plan finished last).
  EXPECT_EQ(nlohmann::json::parse(Slurp(dir + ".json")), j);
  fs::remove(dir + ".json");
  for (const auto& row : j["hardware"]) {
    const std::string gpu = row["gpu"], strategy = row["strategy"];
    const std::string md = Slurp((fs::path(dir) / gpu / "DEPLOY.md").string());
    EXPECT_NE(md.find(strategy.substr(0, strategy.find(",embed"))), std::string::npos)
        << gpu << ": " << md;
  }
  fs::remove_all(dir);
}
