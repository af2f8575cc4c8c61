// l2s sweep's library: YAML subset, grid reading and expansion, the store and resuming.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweep/grid.h"
#include "sweep/sweep.h"
#include "sweep/yaml.h"

namespace l2s::sweep {
namespace {

using nlohmann::json;

TEST(Yaml, MappingsListsFlowAndScalars) {
  auto y = ParseYamlSubset(
      "# comment\n"
      "models: [llama-3.1-8b, 'qwen3-32b']\n"
      "counts:\n"
      "  - 1\n"
      "  - 8\n"
      "workloads:\n"
      "  - {mode: serve, input: 1024, output: 256}\n"
      "  - mode: decode   # trailing comment\n"
      "    context: 4096\n"
      "prices: [2.5, null]\n"
      "plan:\n"
      "  budget: 100\n"
      "  quick: true\n"
      "  slo: \"ttft_ms=2000,tpot_ms=50\"\n",
      "g.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  const json want = json::parse(R"({"models":["llama-3.1-8b","qwen3-32b"],"counts":[1,8],
    "workloads":[{"mode":"serve","input":1024,"output":256},{"mode":"decode","context":4096}],
    "prices":[2.5,null],"plan":{"budget":100,"quick":true,"slo":"ttft_ms=2000,tpot_ms=50"}})");
  EXPECT_EQ(*y, want);
}

TEST(Yaml, ListAtKeyIndentation) {
  auto y = ParseYamlSubset("gpus:\n- h100\n- h200\n", "g.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(*y, json::parse(R"({"gpus":["h100","h200"]})"));
}

TEST(Yaml, ErrorsNameTheLine) {
  auto a = ParseYamlSubset("models: [a, b\n", "g.yaml");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "g.yaml:1: unclosed '[' (sweep grids use a YAML subset: mappings, lists, scalars, [a, b] and {k: v})");
}

TEST(Yaml, ErrorsAreOneLine) {
  for (const char* bad : {"models: [a, b\n", "a: 1\n   b: 2\n", "a: &x 1\nb: *x\n", "a: 1\na: 2\n",
                          "key: value: more\n", "s: \"open\n"}) {
    auto y = ParseYamlSubset(bad, "g.yaml");
    ASSERT_FALSE(y.ok()) << bad;
    EXPECT_EQ(y.status().message().find('\n'), std::string::npos);
    EXPECT_EQ(y.status().message().rfind("g.yaml:", 0), 0u) << y.status().message();
  }
}

// Flow collections: a trailing comma ends the collection (YAML allows it); an empty entry and a
// key given twice in {k: v} are errors (they read as a null - plan's default model - and as the
// last value).
TEST(Yaml, FlowTrailingCommaEmptyEntriesAndTwiceGivenKeys) {
  auto y = ParseYamlSubset("models: [a, b, ]\nplan: {budget: 50, }\n", "g.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(*y, json::parse(R"({"models":["a","b"],"plan":{"budget":50}})"));
  for (const char* bad : {"models: [a, , b]\n", "models: [, a]\n", "plan: {budget: 50, budget: 60}\n",
                          "plan: {, budget: 50}\n"}) {
    auto e = ParseYamlSubset(bad, "g.yaml");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().message().rfind("g.yaml:1: ", 0), 0u) << e.status().message();
  }
}

TEST(Grid, ExpandsInGridOrderWithArgv) {
  auto g = GridFromJson(json::parse(R"({"models":["m1","m2"],"gpus":["h100"],"counts":[1,2],
      "workloads":[{"mode":"serve","input":100,"output":10}],"slos":[null,{"tpot_ms":20}],
      "engines":["vllm"],"prices":[3],"plan":{"budget":50,"seed":1,"no-baselines":true}})"),
                        "g");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto s = Expand(*g);
  ASSERT_EQ(s.size(), 2u * 1 * 2 * 1 * 2 * 1 * 1);
  EXPECT_EQ(s[0].model, "m1");
  EXPECT_EQ(s[4].model, "m2");
  EXPECT_EQ(*s[2].count, 2);
  EXPECT_EQ(s[1].slo, "tpot_ms=20");
  const std::vector<std::string> argv = {"--model", "m1",    "--gpu",  "h100", "--gpus",   "2",  "--mode",
                                         "serve",   "--isl", "100",    "--osl", "10",      "--slo",
                                         "tpot_ms=20", "--engine", "vllm", "--price-per-gpu-hour", "3", "--budget", "50", "--no-baselines",
                                         "--seed", "1", "--json"};  // plan flags in key order
  EXPECT_EQ(s[3].argv, argv);
  EXPECT_EQ(s[3].index, 3u);
  EXPECT_EQ(s[3].Label(), "m1 h100 x2 serve 100/10 slo tpot_ms=20 vllm $3/h");
  // Ids are distinct and stable (FNV-1a 64 of the argv plus the price).
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = i + 1; j < s.size(); ++j) EXPECT_NE(s[i].id, s[j].id);
  EXPECT_EQ(Expand(*g)[3].id, s[3].id);
  EXPECT_EQ(HashArgs(std::vector<std::string>{"a"}), "089be207b544f1e4");  // FNV-1a 64 by hand
  EXPECT_EQ(HashArgs(std::vector<std::string>{}), "cbf29ce484222325");  // the offset basis
}

// A traffic axis: each workload's rate or concurrency reaches its scenarios' plan flags, after
// the lengths, and their labels; a workload without one plans the steady state.
TEST(Grid, WorkloadTrafficIsAnAxis) {
  auto y = ParseYamlSubset(
      "models: m\nworkloads:\n  - {input: 1024, output: 256, rate: 2.5}\n"
      "  - {input: 1024, output: 256, concurrency: 32}\n  - {input: 1024, output: 256}\n"
      "slos: \"p99_ttft_ms=2000\"\n",
      "g.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  auto g = GridFromJson(*y, "g");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto s = Expand(*g);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].argv, (std::vector<std::string>{"--model", "m", "--isl", "1024", "--osl", "256", "--rate",
                                                 "2.5", "--slo", "p99_ttft_ms=2000", "--json"}));
  EXPECT_EQ(s[1].argv, (std::vector<std::string>{"--model", "m", "--isl", "1024", "--osl", "256",
                                                 "--concurrency", "32", "--slo", "p99_ttft_ms=2000", "--json"}));
  EXPECT_EQ(s[0].Label(), "m (gpu) default 1024/256 at 2.5 req/s slo p99_ttft_ms=2000");
  EXPECT_EQ(s[1].Label(), "m (gpu) default 1024/256 x32 clients slo p99_ttft_ms=2000");
  EXPECT_EQ(s[2].Label(), "m (gpu) default 1024/256 slo p99_ttft_ms=2000");
  EXPECT_NE(s[0].id, s[2].id);
  // The results carry the traffic as columns, read from the plan flags.
  const json r0 = Summary(s[0], json());
  EXPECT_EQ(r0["rate"], 2.5);
  EXPECT_TRUE(r0["concurrency"].is_null());
  EXPECT_EQ(Summary(s[1], json())["concurrency"], 32);
  EXPECT_TRUE(Summary(s[2], json())["rate"].is_null());
  const std::string csv = CsvText({r0});
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header.substr(header.size() - std::string(",rate,concurrency,usd_per_mtok_output_at_traffic").size()),
            ",rate,concurrency,usd_per_mtok_output_at_traffic");
  EXPECT_EQ(csv.substr(csv.size() - std::string(",2.5,,\n").size()), ",2.5,,\n") << csv;
}

TEST(Grid, AbsentAxesAreOneDefaultScenario) {
  auto g = GridFromJson(json::parse(R"({"models":"llama-3.1-8b"})"), "g");
  ASSERT_TRUE(g.ok());
  const auto s = Expand(*g);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].argv, (std::vector<std::string>{"--model", "llama-3.1-8b", "--json"}));
}

// `prices` as a mapping prices each GPU type: a scenario's price is its GPU's, one scenario per
// GPU (not every price for every GPU), and the price reaches the plan's flags.
TEST(Grid, PricesPerGpuTypeFollowTheScenarioGpu) {
  auto y = ParseYamlSubset("gpus: [h100, mi300x]\nprices: {h100: 2.5, mi300x: null}\n", "g.yaml");
  ASSERT_TRUE(y.ok()) << y.status().message();
  auto g = GridFromJson(*y, "g");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto s = Expand(*g);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].gpu, "h100");
  ASSERT_TRUE(s[0].price.has_value());
  EXPECT_EQ(*s[0].price, 2.5);
  EXPECT_NE(std::find(s[0].argv.begin(), s[0].argv.end(), "--price-per-gpu-hour"), s[0].argv.end());
  EXPECT_EQ(s[1].gpu, "mi300x");
  EXPECT_FALSE(s[1].price.has_value());
  EXPECT_EQ(std::find(s[1].argv.begin(), s[1].argv.end(), "--price-per-gpu-hour"), s[1].argv.end());
}

TEST(Grid, BadGridsGiveOneClearLine) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model":["x"]})",
       "g: unknown key 'model' (did you mean models?; expected models, gpus, counts, workloads, "
       "slos, engines, prices, plan)"},
      {R"({"foo":["x"]})",
       "g: unknown key 'foo' (expected models, gpus, counts, workloads, slos, engines, prices, "
       "plan)"},
      {R"({"counts":[0]})", "g: each of 'counts' must be a positive integer, got 0"},
      {R"({"counts":[99999999999]})",
       "g: each of 'counts' must be at most 16777216 GPUs (plan's --gpus), got 99999999999"},
      {R"({})", "g: an empty grid: give at least one axis (models:, gpus:, counts:, ...)"},
      {R"({"models":[]})", "g: 'models' is an empty list"},
      {R"({"workloads":[{"mode":"serve","isl":5}]})",
       "g: unknown workload key 'isl' (expected mode, input, output, context, rate, "
       "concurrency; the prompt length is 'input' here)"},
      {R"({"workloads":[{"mode":"serve","input":5,"osl":5}]})",
       "g: unknown workload key 'osl' (expected mode, input, output, context, rate, "
       "concurrency; the output length is 'output' here)"},
      // A traffic: one of rate and concurrency, on a serving workload, given in one place.
      {R"({"workloads":[{"input":5,"output":5,"rate":2,"concurrency":4}]})",
       "g: workload {\"concurrency\":4,\"input\":5,\"output\":5,\"rate\":2}: rate (open loop) "
       "and concurrency (closed loop) are two traffics; give one"},
      {R"({"workloads":[{"mode":"decode","context":64,"rate":2}]})",
       "g: workload {\"context\":64,\"mode\":\"decode\",\"rate\":2}: a traffic (rate or "
       "concurrency) is served: mode serve, with input and output"},
      {R"({"workloads":[{"context":64,"concurrency":8}]})",
       "g: workload {\"concurrency\":8,\"context\":64}: a traffic (rate or concurrency) is served: "
       "give its output length ('output')"},
      {R"({"workloads":[{"input":5,"output":5,"rate":0}]})", "g: workload 'rate' is requests/s in (0, 1e6] (plan's --rate), got 0"},
      {R"({"workloads":[{"input":5,"output":5,"rate":2e6}]})",
       "g: workload 'rate' is requests/s in (0, 1e6] (plan's --rate), got 2000000.0"},
      {R"({"workloads":[{"input":5,"output":5,"concurrency":1.5}]})",
       "g: workload 'concurrency' must be a positive integer, got 1.5"},
      {R"({"workloads":[{"input":5,"output":5,"rate":2}],"plan":{"rate":3}})",
       "g: plan flag 'rate' and a workload's rate or concurrency are two traffics; give the "
       "traffic in one place"},
      // A length the workload's mode does not read (plan would refuse each scenario).
      {R"({"workloads":[{"mode":"serve","input":5,"output":5,"context":64}]})",
       "g: workload {\"context\":64,\"input\":5,\"mode\":\"serve\",\"output\":5}: mode serve "
       "does not read 'context' (serve: input and output; prefill: input; decode: context)"},
      {R"({"workloads":[{"input":512}]})",
       "g: workload {\"input\":512}: mode decode does not read 'input' (serve: input and output; "
       "prefill: input; decode: context)"},
      {R"({"prices":[-1]})",
       "g: each of 'prices' is a price per GPU-hour >= 0 (or 'prices' is a mapping of GPU to "
       "price), got -1"},
      {R"({"gpus":["h100","mi300x"],"prices":{"h100":2.5,"h200":3}})",
       "g: 'prices' names GPU 'h200', which is not one of 'gpus'"},
      {R"({"gpus":["h100","mi300x"],"prices":{"h100":2.5}})",
       "g: 'prices' has no price for GPU 'mi300x' (give it null for none)"},
      {R"({"gpus":["h100"],"prices":{"h100":"cheap"}})",
       "g: the price of 'h100' is a price per GPU-hour >= 0 or null, got \"cheap\""},
      {R"({"plan":{"gpus":4}})", "g: plan flag 'gpus' is set by the grid's axes or the sweep itself"},
      {R"([1])", "g: a sweep grid is a mapping (models:, gpus:, counts:, ...)"},
      // Names no scenario could plan: refused once, before anything runs.
      {R"({"gpus":["h100","b300x"]})",
       "g: 'gpus': unknown GPU \"b300x\" (did you mean b300?); GPU presets: h100, h200, h800, "
       "a100, b200, gb200, h20, b300, gb300, mi300x, mi325x, mi355x"},
      {R"({"engines":["vllm","auto"]})",
       "g: 'engines': unknown engine 'auto' (expected one of: ideal, vllm, sglang, trtllm, "
       "dynamo+vllm, dynamo+sglang, dynamo+trtllm, megatron, atom) (leave 'engines' out to plan "
       "every engine, as plan does without --engine)"},
      {R"({"engines":["vllm-0.12","trtllm-0.17"]})",
       "g: 'engines': l2s plans TensorRT-LLM from release 1.1 on (its capability row: the rules "
       "and launch flags read from that release; docs/PLAN.md \"Engine rules\"); 'trtllm-0.17' "
       "asks for 0.17: name release 1.1 or later, or none"},
  };
  for (const auto& [text, msg] : cases) {
    auto g = GridFromJson(json::parse(text), "g");
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.status().message(), msg);
  }
}

TEST(Grid, LoadGridReadsJsonAndYamlAlike) {
  const auto dir = std::filesystem::temp_directory_path() / ("l2s_sweep_grid_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "g.json") << R"({"models": ["a"], "counts": [1, 2]})";
  std::ofstream(dir / "g.yaml") << "models: [a]\ncounts: [1, 2]\n";
  auto a = LoadGrid((dir / "g.json").string());
  auto b = LoadGrid((dir / "g.yaml").string());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Expand(*a)[1].id, Expand(*b)[1].id);
  // A JSON grid with a key given twice is an error (nlohmann alone keeps the last).
  std::ofstream(dir / "twice.json") << R"({"models": ["a"], "counts": [1], "counts": [2]})";
  auto twice = LoadGrid((dir / "twice.json").string());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("key \"counts\" is given twice"), std::string::npos)
      << twice.status().message();
  auto missing = LoadGrid((dir / "none.yaml").string());
  EXPECT_EQ(missing.status().message(), "cannot open sweep grid '" + (dir / "none.yaml").string() + "'");
  std::filesystem::remove_all(dir);
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fake plan: tokens/s per GPU = 100 x the GPU count; "bad" models get no valid plan.
Outcome FakePlan(const Scenario& s) {
  if (s.model == "bad") return {1, R"({"valid": false, "reason": "no fit", "exit_code": 1})" "\n"};
  json p;
  p["problem"] = {{"gpus", *s.count}, {"engine", "vllm"}};
  p["best"] = {{"tokens_per_s_per_gpu", 100.0 * static_cast<double>(*s.count)},
               {"ttft_ms", 1.5},
               {"tpot_ms", 20},
               {"strategy", "pp=1,tp=1"},
               {"engine", "vllm"}};
  return {0, p.dump(2) + "\n"};
}

// A scenario planned for a traffic carries its pick's simulated P99s into the row; one without
// a traffic leaves the columns null (empty in the CSV).
TEST(Sweep, SummaryCarriesATrafficPicksPercentiles) {
  Scenario s;
  s.model = "m";
  s.count = 2;
  json p;
  p["problem"] = {{"gpus", 2}, {"engine", "vllm"}};
  p["best"] = {{"tokens_per_s_per_gpu", 10.0}, {"strategy", "pp=1,tp=1"}, {"engine", "vllm"},
               {"serve", {{"ttft_ms", {{"p50", 20.0}, {"p99", 41.5}}},
                          {"tpot_ms", {{"p50", 7.0}, {"p99", 8.25}}}}},
               {"cost", {{"usd_per_mtok_output", 0.5}}},
               {"cost_at_traffic", {{"usd_per_mtok_output", 4.25}}}};
  const json row = Summary(s, {{"exit_code", 0}, {"stdout", p.dump()}});
  EXPECT_EQ(row["p99_ttft_ms"], 41.5);
  EXPECT_EQ(row["p99_tpot_ms"], 8.25);
  EXPECT_EQ(row["usd_per_mtok_output"], 0.5);  // the steady state's
  EXPECT_EQ(row["usd_per_mtok_output_at_traffic"], 4.25);
  p["best"].erase("serve");
  const json plain = Summary(s, {{"exit_code", 0}, {"stdout", p.dump()}});
  EXPECT_TRUE(plain["p99_ttft_ms"].is_null());
  EXPECT_TRUE(plain["p99_tpot_ms"].is_null());
  p["best"].erase("cost_at_traffic");
  EXPECT_TRUE(Summary(s, {{"exit_code", 0}, {"stdout", p.dump()}})["usd_per_mtok_output_at_traffic"].is_null());
}

TEST(Sweep, ResumesAndOutputsDoNotDependOnJobsOrRanks) {
  auto g = GridFromJson(json::parse(R"({"models":["m","bad"],"gpus":["h100"],"counts":[1,2,4]})"), "g");
  ASSERT_TRUE(g.ok());
  const auto scenarios = Expand(*g);
  const auto root = std::filesystem::temp_directory_path() / ("l2s_sweep_run_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::atomic<int> calls{0};
  Runner run = [&](const Scenario& s) {
    ++calls;
    return FakePlan(s);
  };
  Gather same = [](const std::vector<std::string>& v) { return v; };
  SweepOptions opt;
  opt.progress = false;
  // Half the grid first (as if interrupted), then the whole grid: only the rest runs.
  opt.out_dir = (root / "a").string();
  opt.jobs = 1;
  SweepStats st;
  ASSERT_TRUE(RunSweep(std::vector<Scenario>(scenarios.begin(), scenarios.begin() + 3), opt, run, same, &st).ok());
  EXPECT_EQ(calls.load(), 3);
  ASSERT_TRUE(RunSweep(scenarios, opt, run, same, &st).ok());
  EXPECT_EQ(calls.load(), 6);
  EXPECT_EQ(st.skipped, 3u);
  EXPECT_EQ(st.ran, 3u);
  EXPECT_EQ(st.valid, 3u);
  ASSERT_TRUE(RunSweep(scenarios, opt, run, same, &st).ok());
  EXPECT_EQ(calls.load(), 6);  // nothing left to run
  EXPECT_EQ(st.skipped, 6u);
  // Fresh runs with 3 threads, and as two "ranks" whose lines are gathered by hand.
  opt.out_dir = (root / "b").string();
  opt.jobs = 3;
  ASSERT_TRUE(RunSweep(scenarios, opt, run, same, &st).ok());
  opt.out_dir = (root / "c").string();
  opt.jobs = 1;
  opt.ranks = 2;
  std::vector<std::string> rank1;
  opt.rank = 1;
  ASSERT_TRUE(RunSweep(scenarios, opt, run, [&](const std::vector<std::string>& v) {
                rank1 = v;
                return std::vector<std::string>{};
              }, &st).ok());
  EXPECT_EQ(rank1.size(), 3u);
  opt.rank = 0;
  ASSERT_TRUE(RunSweep(scenarios, opt, run, [&](const std::vector<std::string>& v) {
                std::vector<std::string> all = v;
                all.insert(all.end(), rank1.begin(), rank1.end());
                return all;
              }, &st).ok());
  for (const char* f : {"results.jsonl", "results.csv", "results.json", "results.svg"}) {
    EXPECT_EQ(Slurp(root / "a" / f), Slurp(root / "b" / f)) << f;
    EXPECT_EQ(Slurp(root / "a" / f), Slurp(root / "c" / f)) << f;
  }
  const std::string csv = Slurp(root / "a" / "results.csv");
  EXPECT_NE(csv.find("\n2,"), std::string::npos);
  EXPECT_NE(csv.find(",h100,4,,,,,,,,0,true,vllm,400,1.5,20,,,,4,agg,\"pp=1,tp=1\",,,,,,\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,false,,,,,,,,,,,no fit,,,,,\n"), std::string::npos) << csv;
  // The store holds the plan's stdout byte for byte.
  std::ifstream store(root / "a" / "results.jsonl");
  std::string first;
  std::getline(store, first);
  EXPECT_EQ(json::parse(first)["stdout"].get<std::string>(), FakePlan(scenarios[0]).stdout_text);
  // An interrupted plan (exit 130) is not stored: the next run tries it again.
  opt.out_dir = (root / "d").string();
  opt.ranks = 1;
  Runner interrupted = [](const Scenario&) { return Outcome{130, ""}; };
  ASSERT_TRUE(RunSweep(scenarios, opt, interrupted, same, &st).ok());
  EXPECT_EQ(Slurp(root / "d" / "results.jsonl"), "");
  EXPECT_EQ(st.valid, 0u);
  // A line cut short (killed mid-write) is ignored and its scenario runs again.
  {
    std::ofstream app(root / "a" / "results.jsonl", std::ios::app);
    app << "{\"id\": \"trunc";
  }
  auto rows = ReadStore((root / "a" / "results.jsonl").string());
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 6u);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace l2s::sweep
