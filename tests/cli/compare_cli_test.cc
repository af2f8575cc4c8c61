// `l2s compare` end to end through the built binary (L2S_BIN): the JSON contract, traces.csv,
// the SVG pictures (well-formed, labelled axes, legend), serve-mode Pareto plot, the missing-rw
// case and usage errors. Small problems and budgets keep it fast; nothing asserts on timing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_l2s.h"

namespace {

namespace fs = std::filesystem;

using l2s_cli_test::Result;
using l2s_cli_test::Slurp;
using l2s_cli_test::Spawn;
using l2s_cli_test::TempPath;
using l2s_cli_test::Wait;

Result RunL2s(const std::vector<std::string>& args) { return l2s_cli_test::RunL2s(args, "l2s_cmp"); }

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

nlohmann::json ParseJson(const std::string& s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << s.substr(0, 2000);
  return j;
}

void ExpectSvg(const std::string& path, const std::vector<std::string>& labels) {
  SCOPED_TRACE(path);
  ASSERT_TRUE(fs::exists(path));
  const std::string svg = Slurp(path);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  for (const std::string& l : labels) EXPECT_NE(svg.find(l), std::string::npos) << l;
}

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempPath("l2s_compare_dir");
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CompareCli, DecodeJsonCsvAndConvergencePlot) {
  const int seeds = 2, budget = 150;
  const Result r = RunL2s({"compare", "--model", "mixtral-8x7b", "--gpus", "8", "--context", "4096",
                        "--searchers", "rl(refine=0.25),rw,ga,megatron,default,oracle", "--seeds",
                        std::to_string(seeds), "--budget", std::to_string(budget), "--json",
                        "--out-dir", dir_});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_TRUE(j["searchers"].is_object());
  for (const char* name : {"rl(refine=0.25)", "rw", "ga", "megatron", "default", "oracle"}) {
    SCOPED_TRACE(name);
    const nlohmann::json& s = j["searchers"][name];
    ASSERT_TRUE(s.is_object());
    const bool budget_free =
        std::string(name) == "megatron" || std::string(name) == "default" || std::string(name) == "oracle";
    ASSERT_TRUE(s["per_seed"].is_array());
    EXPECT_EQ(s["per_seed"].size(), budget_free ? 1u : static_cast<size_t>(seeds));
    double sum = 0, lo = 1e300, hi = -1e300;
    for (const auto& v : s["per_seed"]) {
      sum += v.get<double>();
      lo = std::min(lo, v.get<double>());
      hi = std::max(hi, v.get<double>());
    }
    EXPECT_NEAR(s["mean"].get<double>(), sum / s["per_seed"].size(), 1e-9 * (1 + std::fabs(sum)));
    EXPECT_DOUBLE_EQ(s["min"].get<double>(), lo);
    EXPECT_DOUBLE_EQ(s["max"].get<double>(), hi);
    EXPECT_GE(s["mean_wall_s"].get<double>(), 0);
    if (!budget_free) {
      for (const auto& c : s["per_seed_calls"]) EXPECT_LE(c.get<int>(), budget);
    }
    // rw is in the list: everything is normalised to it (when it found anything).
    if (j["searchers"]["rw"]["mean"].get<double>() > 0) {
      ASSERT_TRUE(s["normalised_to_rw"].is_number());
      EXPECT_NEAR(s["normalised_to_rw"].get<double>(),
                  s["mean"].get<double>() / j["searchers"]["rw"]["mean"].get<double>(), 1e-9);
    }
  }
  EXPECT_EQ(j["rw_in_list"], true);
  EXPECT_NEAR(j["searchers"]["rw"]["normalised_to_rw"].get<double>(), 1.0, 1e-12);
  // The oracle is the optimum over the whole space and the Megatron heuristic a part of it.
  ASSERT_TRUE(j["oracle"].is_number());
  ASSERT_TRUE(j["megatron"].is_number());
  EXPECT_DOUBLE_EQ(j["megatron"].get<double>(), j["searchers"]["megatron"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(j["oracle"].get<double>(), j["searchers"]["oracle"]["mean"].get<double>());
  EXPECT_NEAR(j["searchers"]["megatron"]["ratio_to_megatron"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(j["searchers"]["megatron"]["seeds_at_least_megatron"], 1);
  EXPECT_TRUE(j["files"]["pareto_svg"].is_null());  // decode mode

  // traces.csv: header, rows of known searchers and seeds, best-so-far non-decreasing per run.
  const std::string csv = Slurp(dir_ + "/traces.csv");
  std::istringstream in(csv);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "searcher,seed,call,value");
  std::map<std::string, double> last;
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    // Keys with commas are quoted: split from the right.
    const size_t c3 = line.rfind(','), c2 = line.rfind(',', c3 - 1), c1 = line.rfind(',', c2 - 1);
    ASSERT_NE(c1, std::string::npos) << line;
    const std::string run = line.substr(0, c2);
    const double value = std::stod(line.substr(c3 + 1));
    const long call = std::stol(line.substr(c2 + 1, c3 - c2 - 1));
    EXPECT_GE(call, 1) << line;
    if (last.count(run)) {
      EXPECT_GE(value, last[run]) << line;
    }
    last[run] = value;
  }
  EXPECT_GT(rows, 0);
  EXPECT_TRUE(last.count("rw,0") && last.count("rw,1")) << csv.substr(0, 500);
  EXPECT_TRUE(last.count("\"rl(refine=0.25)\",0") || last.count("rl(refine=0.25),0")) << csv.substr(0, 500);
  // The last row of a run is its final best.
  EXPECT_DOUBLE_EQ(last["rw,1"], j["searchers"]["rw"]["per_seed"][1].get<double>());

  ExpectSvg(dir_ + "/convergence.svg",
            {"simulator calls", "best tokens/s per GPU", "Megatron heuristic", "oracle optimum",
             "rw (mean, min-max band)"});
  EXPECT_FALSE(fs::exists(dir_ + "/pareto.svg"));
}

TEST_F(CompareCli, ServeModeDrawsTheParetoFrontAndTable) {
  const Result r = RunL2s({"compare", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                        "--isl", "1024", "--osl", "256", "--searchers", "ga,megatron",
                        "--seeds", "2", "--budget", "120", "--out-dir", dir_, "--x-scale",
                        "linear"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The readable table, saying that rw is missing.
  EXPECT_NE(r.out.find("searcher"), std::string::npos);
  EXPECT_NE(r.out.find("\nga "), std::string::npos) << r.out;  // its row of the table
  EXPECT_NE(r.out.find("\"rw\") is not in --searchers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("oracle not in --searchers"), std::string::npos) << r.out;
  // Issue 46 item 4: log axes and the legend boxed inside the frame, as plan --pareto's chart.
  ExpectSvg(dir_ + "/pareto.svg",
            {"tokens/s per user (1 / TPOT) (log scale)", "tokens/s per GPU (simulated) (log scale)",
             "Pareto front", "ga (evaluated)", "class=\"legend-box\""});
  ExpectSvg(dir_ + "/convergence.svg", {"simulator calls", "Megatron heuristic"});
  EXPECT_EQ(Slurp(dir_ + "/convergence.svg").find("(log scale)"), std::string::npos);
}

TEST_F(CompareCli, WithoutRwOrOracleTheRatiosAreNull) {
  const Result r = RunL2s({"compare", "--model", "mixtral-8x7b", "--gpus", "8", "--context", "4096",
                        "--searchers", "ga", "--seeds", "2", "--budget", "60", "--json",
                        "--out-dir", dir_});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  EXPECT_EQ(j["rw_in_list"], false);
  EXPECT_TRUE(j["oracle"].is_null());
  EXPECT_TRUE(j["searchers"]["ga"]["normalised_to_rw"].is_null());
  EXPECT_TRUE(j["searchers"]["ga"]["fraction_of_oracle"].is_null());
  // The Megatron heuristic is run as the reference even when not listed.
  EXPECT_TRUE(j["megatron"].is_number());
  EXPECT_TRUE(j["searchers"]["ga"]["ratio_to_megatron"].is_number());
  EXPECT_FALSE(j["searchers"].contains("megatron"));
}

// compare --engine E runs on the space plan --engine E searches (it ran on the paper's space,
// whose optimum E cannot launch): its oracle is plan's.
TEST_F(CompareCli, AnEngineRestrictsTheSpaceAsPlanDoes) {
  const std::vector<std::string> problem = {"--model", "qwen3-30b-a3b", "--gpus", "8", "--mode",
                                            "serve", "--isl", "1024", "--osl", "256", "--engine",
                                            "vllm"};
  std::vector<std::string> cmp = {"compare", "--searchers", "sa,oracle", "--seeds", "1",
                                  "--budget", "100", "--json", "--out-dir", dir_};
  cmp.insert(cmp.end(), problem.begin(), problem.end());
  const Result c = RunL2s(cmp);
  ASSERT_EQ(c.code, 0) << c.err;
  std::vector<std::string> plan = {"plan", "--json", "--instance-gpus", "8"};
  plan.insert(plan.end(), problem.begin(), problem.end());
  const Result p = RunL2s(plan);
  ASSERT_EQ(p.code, 0) << p.err;
  const double oracle = ParseJson(c.out)["oracle"].get<double>();
  const nlohmann::json pj = ParseJson(p.out);
  EXPECT_DOUBLE_EQ(oracle, pj["oracle"]["tokens_per_s_per_gpu"].get<double>());
  EXPECT_EQ(pj["oracle"]["strategy"].get<std::string>().find("attn_core=none"), std::string::npos);
}

TEST(CompareCliErrors, OneLineAndExitCode) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"compare", "--seeds", "0"}, "--seeds"},
      {{"compare", "--budget", "0"}, "--budget"},
      {{"compare", "--searchers", "rl,nope"}, "nope"},
      {{"compare", "--searchers", "rw,,sa"}, "empty"},
      {{"compare", "--searchers", "rw,rw"}, "twice"},
      {{"compare", "--x-scale", "cubic"}, "--x-scale"},
      {{"compare", "--model", "no-such-model"}, "presets"},
      {{"compare", "--gpus", "0"}, "--gpus"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args.back());
    const Result r = RunL2s(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(Count(r.err, "\n"), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

// `l2s compare --pareto`: the TPOT sweep's front is drawn on pareto.svg beside the evaluated
// clouds and listed in the JSON.
TEST_F(CompareCli, ParetoDrawsTheTpotSweep) {
  const Result r = RunL2s({"compare", "--model", "llama-3.1-8b", "--gpus", "8", "--mode", "serve",
                           "--isl", "1024", "--osl", "256", "--searchers", "ga,megatron",
                           "--seeds", "1", "--budget", "60", "--out-dir", dir_, "--pareto",
                           "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = ParseJson(r.out);
  ASSERT_TRUE(j["pareto"].is_array());
  EXPECT_GE(j["pareto"].size(), 2u);
  EXPECT_EQ(j["pareto_tpot_limits_ms"].size(), 16u);
  ExpectSvg(dir_ + "/pareto.svg", {"aggregated (TPOT sweep", "ga (evaluated)"});
}

}  // namespace
