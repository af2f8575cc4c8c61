// rl_study: the measurements of docs/dev/RL_STUDY.md. For each scenario (model, decode context) on
// an H100 cluster it runs the RL searcher and the baselines over several seeds with the paper's
// budget, the Megatron heuristic and the exact oracle once, and reports mean best throughput
// normalised to the random walk (the paper's Table 1), RL against Megatron per seed, and the
// fraction of the oracle per seed. Optional ablations run RL variants (spec strings) on the same
// seeds.
//
//   rl_study [--scenario gpt-moe-1.2t:16k ...]
//            [--suite paper|8gpu|serve|widep|heldout|new17a|new17b ...]
//            [--seeds 10] [--budget 4000] [--gpus 1024] [--gpu h100] [--osl 512]
//            [--ttft-ms 2000] [--tpot-ms 50] [--rl "rl"] [--baselines rw,sa]
//            [--ablation "rl(elites=3)" ...] [--ablations] [--jobs 2] [--no-oracle]
//            [--landscape] [--json]
//
// A scenario is MODEL:LENGTH[:MODE][@GPUS[xGPU] | @CLUSTER-PRESET]: LENGTH is the decode context
// or the prefill/serve prompt length, MODE decode (default), prefill or serve (serve uses --osl
// and the SLOs --ttft-ms / --tpot-ms), the cluster defaults to --gpus x --gpu.
// Default scenarios: the paper's six (gpt-moe-1.2t and gpt-moe-1.6t, decode at 16k, 32k, 64k).
// --suite adds named sets (SuiteScenarios below).
// Seeds are 1..N. Batch is searched over powers of two up to 1024 (SpaceOptions defaults).
// --jobs runs seeds of one searcher on that many threads (every search is single-threaded and
// independent; results do not depend on --jobs). --ablations adds the standard ablation set of
// docs/dev/RL_STUDY.md (kStandardAblations below). --landscape evaluates every structurally valid
// strategy of each scenario once (~40 s per paper scenario) and counts those within 0.1%, 1% and
// 5% of the best: how needle-like the target is.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "hw/hw.h"
#include "model/presets.h"
#include "search/rl.h"
#include "search/search.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

// The ablations of docs/dev/RL_STUDY.md: each changes one thing of the default searcher, except
// the last two: the paper's configuration (rl.h PaperRlOptions) and it with prefix masking.
const std::vector<std::string> kStandardAblations = {
    "rl(refine=0)",   "rl(refine=0.25)", "rl(refine=0.75)", "rl(elites=8)", "rl(mask=0)",
    "rl(restarts=0)", "rl(prior=0)",     "rl(lr=1e-3)",     "rl(lr=1e-12)", "rl(paper=1)",
    "rl(paper=1,mask=1)"};

struct Scenario {
  std::string model;
  int64_t length = 0;       // decode: context; prefill / serve: prompt length (isl)
  Mode mode = Mode::kDecode;
  int gpus = 0;             // 0 = --gpus
  std::string gpu;          // empty = --gpu; or a cluster preset such as gb200-nvl72
  std::string label;        // "gpt-moe-1.2t:16k"
};

// MODEL:LENGTH[:MODE][@GPUS[xGPU] | @CLUSTER-PRESET], e.g. "gpt-moe-1.2t:16k",
// "deepseek-v3:4k:decode@32xh800", "deepseek-v3:2k:serve@gb200-nvl72".
StatusOr<Scenario> ParseScenario(const std::string& text) {
  Scenario s;
  s.label = text;
  std::string body = text;
  const size_t at = body.find('@');
  if (at != std::string::npos) {
    std::string where = body.substr(at + 1);
    body = body.substr(0, at);
    const size_t x = where.find('x');
    const bool numeric = !where.empty() && where[0] >= '0' && where[0] <= '9';
    if (!numeric) {
      s.gpu = where;  // a cluster preset
    } else {
      try {
        s.gpus = std::stoi(where.substr(0, x));
      } catch (...) {
        return Status::InvalidArgument(fmt::format("scenario \"{}\": bad GPU count", text));
      }
      if (s.gpus <= 0) return Status::InvalidArgument(fmt::format("scenario \"{}\": bad GPU count", text));
      if (x != std::string::npos) s.gpu = where.substr(x + 1);
    }
  }
  const size_t colon = body.find(':');
  if (colon == std::string::npos)
    return Status::InvalidArgument(fmt::format("scenario \"{}\": expected MODEL:LENGTH[:MODE][@GPUSxGPU]", text));
  s.model = body.substr(0, colon);
  std::string ctx = body.substr(colon + 1);
  const size_t colon2 = ctx.find(':');
  if (colon2 != std::string::npos) {
    if (!ParseMode(ctx.substr(colon2 + 1), &s.mode))
      return Status::InvalidArgument(fmt::format("scenario \"{}\": bad mode", text));
    ctx = ctx.substr(0, colon2);
  }
  int64_t mult = 1;
  if (!ctx.empty() && (ctx.back() == 'k' || ctx.back() == 'K')) {
    mult = 1024;  // "16k" = 16,384 tokens (the simulator's default context)
    ctx.pop_back();
  }
  try {
    s.length = std::stoll(ctx) * mult;
  } catch (...) {
    return Status::InvalidArgument(fmt::format("scenario \"{}\": bad length", text));
  }
  if (s.length <= 0) return Status::InvalidArgument(fmt::format("scenario \"{}\": bad length", text));
  return s;
}

// Named suites (--suite): the problems issue 14 asks the RL searcher to hold on.
constexpr const char* kSuiteNames = "paper, 8gpu, serve, widep, heldout, new17a, new17b";
std::vector<std::string> SuiteScenarios(const std::string& name) {
  if (name == "paper")
    return {"gpt-moe-1.2t:16k", "gpt-moe-1.2t:32k", "gpt-moe-1.2t:64k",
            "gpt-moe-1.6t:16k", "gpt-moe-1.6t:32k", "gpt-moe-1.6t:64k"};
  if (name == "8gpu")
    return {"llama-3.1-8b:4k@8", "llama-3.1-70b:4k@8", "qwen3-32b:4k@8", "mixtral-8x7b:4k@8",
            "qwen3-30b-a3b:4k@8"};
  // docs/dev/RESULTS.md's beyond-paper problems (serve 2048 in / 512 out, TTFT 2 s, TPOT 50 ms);
  // kimi-k2 on 256 H100s and deepseek-v3 on the GB200 NVL72 since issue 14's fifth pass.
  if (name == "serve")
    return {"deepseek-v3:2k:serve@32xh100", "deepseek-v3:2k:serve@256xh100",
            "deepseek-v3:2k:serve@64xh200", "kimi-k2:2k:serve@32xh100",
            "kimi-k2:2k:serve@64xh200", "llama-3.1-405b:2k:serve@16xh100",
            "qwen3-235b-a22b:2k:serve@8xh100", "qwen3-235b-a22b:2k:serve@16xh100",
            "kimi-k2:2k:serve@256xh100", "deepseek-v3:2k:serve@gb200-nvl72"};
  // Wide expert parallelism: spaces with the slots and overlap heads.
  if (name == "widep")
    return {"deepseek-v3:4k:decode@32xh800", "deepseek-v3:4k:decode@144xh800",
            "deepseek-v3:4k:prefill@32xh800", "deepseek-v3:4k:decode@64xh100",
            "deepseek-v3:4k:prefill@128xh100"};
  // The problems held out of the former pretraining (the models llama-3.1-70b,
  // mixtral-8x7b, qwen3-30b-a3b and kimi-k2, every H200 cluster and every 16- or 64-GPU one):
  // docs/dev/RL_STUDY.md's seven of the warm-start study, and the sixteen first run in issue 14's
  // seventeenth pass (sets A and B; A's mixtral-8x7b serve problem was traced in that pass).
  if (name == "heldout")
    return {"llama-3.1-70b:4k@16xh200", "mixtral-8x7b:4k@16xh200", "qwen3-30b-a3b:4k@16xh200",
            "kimi-k2:4k@64xh200", "llama-3.1-70b:2k:serve@16xh200",
            "qwen3-30b-a3b:2k:prefill@64xh200", "mixtral-8x7b:2k:serve@64xh200"};
  if (name == "new17a")
    return {"llama-3.1-70b:8k@64xh200", "mixtral-8x7b:16k@16", "qwen3-30b-a3b:2k:serve@64xh200",
            "kimi-k2:2k:prefill@64xh200", "llama-3.1-70b:8k:prefill@16xh200",
            "mixtral-8x7b:2k:serve@16xh200", "qwen3-30b-a3b:32k@64", "kimi-k2:2k:serve@16xh200"};
  if (name == "new17b")
    return {"llama-3.1-70b:2k:serve@64xh200", "mixtral-8x7b:8k@64",
            "qwen3-30b-a3b:8k:prefill@16xh200", "kimi-k2:8k@64xh200", "llama-3.1-70b:32k@16",
            "mixtral-8x7b:8k:prefill@64xh200", "qwen3-30b-a3b:2k:serve@16", "kimi-k2:2k:serve@64"};
  return {};
}

struct Landscape {
  int64_t structural = 0;  // structurally valid strategies
  int64_t valid = 0;       // ... that also fit in memory / meet the SLOs
  double best = 0;
  int64_t within[3] = {0, 0, 0};  // value >= (1 - 0.001 | 0.01 | 0.05) * best
};

// Exhaustive: every prefix-masked choice sequence is a structurally valid strategy.
Landscape MapLandscape(const Simulator& sim, const StrategySpace& space) {
  const int heads = space.num_heads();
  std::vector<int> idx(heads, 0);
  std::vector<float> values;
  std::vector<std::vector<uint8_t>> masks(heads);
  for (int h = 0; h < heads; ++h) masks[h].resize(space.head_size(h));
  Landscape l;
  // Iterative depth-first enumeration over the heads.
  int h = 0;
  std::vector<int> next(heads + 1, 0);
  space.Mask(std::span<const int>(idx.data(), 0), 0, masks[0]);
  next[0] = 0;
  while (h >= 0) {
    if (h == heads) {
      const Evaluation e = sim.Evaluate(space.Decode(idx));
      ++l.structural;
      values.push_back(e.valid() ? static_cast<float>(e.tokens_per_s_per_gpu) : 0.0f);
      --h;
      continue;
    }
    int& i = next[h];
    while (i < space.head_size(h) && !masks[h][i]) ++i;
    if (i >= space.head_size(h)) {
      --h;
      continue;
    }
    idx[h] = i++;
    ++h;
    if (h < heads) {
      space.Mask(std::span<const int>(idx.data(), h), h, masks[h]);
      next[h] = 0;
    }
  }
  for (float v : values) {
    if (v > 0) ++l.valid;
    l.best = std::max(l.best, static_cast<double>(v));
  }
  const double fr[3] = {0.001, 0.01, 0.05};
  for (float v : values)
    for (int k = 0; k < 3; ++k)
      if (v > 0 && v >= (1 - fr[k]) * l.best) ++l.within[k];
  return l;
}

struct Run {
  double value = 0;  // best tokens/s per GPU (0 when nothing valid was found)
  double wall_s = 0;
  int64_t calls = 0;
  std::string best;
  std::string note;
  std::vector<TracePoint> trace;  // best-so-far improvements (call, value)
  std::optional<RlStats> rl;  // rl searchers only: the search's counters
};

// First call at which the best-so-far reached `fraction` of `target`; -1 when it never did.
int64_t CallsToReach(const Run& r, double target, double fraction) {
  for (const TracePoint& t : r.trace)
    if (t.value >= fraction * target) return t.call;
  return -1;
}

// Runs `spec` for seeds 1..n on `jobs` threads.
std::vector<Run> RunSeeds(const Simulator& sim, const StrategySpace& space, const std::string& spec,
                          int n, int64_t budget, int jobs) {
  std::vector<Run> runs(n);
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i = next++; i < n; i = next++) {
      StatusOr<std::unique_ptr<Searcher>> s = MakeSearcher(spec);
      if (!s.ok()) {
        runs[i].note = s.status().message();
        continue;
      }
      SearchResult r = (*s)->Search(sim, space, budget, static_cast<uint64_t>(i + 1), nullptr);
      runs[i].value = r.found ? r.eval.tokens_per_s_per_gpu : 0.0;
      runs[i].wall_s = r.wall_s;
      runs[i].calls = r.calls;
      runs[i].best = r.found ? ToText(r.best) : "";
      runs[i].note = r.note;
      runs[i].trace = r.trace;
      if (const auto* rl = dynamic_cast<const RlSearcher*>(s->get())) runs[i].rl = rl->last_stats();
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return runs;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
// Lower median for even counts (the 5th of 10 sorted values): the conservative choice.
double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

nlohmann::json RunsJson(const std::vector<Run>& runs, double oracle) {
  nlohmann::json a = nlohmann::json::array();
  for (const Run& r : runs) {
    a.push_back({{"value", r.value},
                 {"fraction_of_oracle", oracle > 0 ? r.value / oracle : 0.0},
                 {"wall_s", r.wall_s},
                 {"calls", r.calls},
                 {"calls_to_0.99", oracle > 0 ? CallsToReach(r, oracle, 0.99) : -1},
                 {"best", r.best},
                 {"note", r.note}});
    if (r.rl) {  // where an rl search's calls went (RlStats)
      a.back()["policy_calls"] = r.rl->proposals;
      a.back()["refine_calls"] = r.rl->refine_calls;
    }
  }
  return a;
}

std::vector<double> Values(const std::vector<Run>& runs) {
  std::vector<double> v;
  for (const Run& r : runs) v.push_back(r.value);
  return v;
}

int Main(int argc, char** argv) {
  CLI::App app{"rl_study: RL searcher vs baselines, Megatron and the exact oracle"};
  std::vector<std::string> scenario_texts;
  int seeds = 10;
  int64_t budget = 4000;
  int gpus = 1024;
  std::string gpu = "h100";
  std::string rl_spec = "rl";
  std::vector<std::string> baselines = {"rw", "sa"};
  std::vector<std::string> ablations;
  bool json = false;
  bool no_oracle = false;
  bool standard_ablations = false;
  bool landscape = false;
  int jobs = 1;
  app.add_option("--scenario", scenario_texts, "MODEL:CONTEXT, e.g. gpt-moe-1.2t:16k (repeatable)");
  app.add_option("--seeds", seeds, "seeds 1..N per searcher")->check(CLI::Range(1, 1000));
  app.add_option("--budget", budget, "simulator calls per search")->check(CLI::Range(1, 100000000));
  app.add_option("--gpus", gpus, "GPUs in the cluster")->check(CLI::Range(1, 1 << 20));
  app.add_option("--gpu", gpu, "GPU preset of the cluster");
  app.add_option("--rl", rl_spec,
                 "RL searcher spec (default rl; rl(paper=1): the paper's configuration)");
  app.add_option("--baselines", baselines, "budgeted baselines (comma separated)")->delimiter(',');
  app.add_option("--ablation", ablations, "extra RL specs to run on the same seeds (repeatable)");
  app.add_option("--jobs", jobs, "threads (seeds in parallel)")->check(CLI::Range(1, 64));
  std::vector<std::string> suites;
  int64_t osl = 512;
  double ttft_ms = 2000, tpot_ms = 50;
  app.add_option("--suite", suites,
                 fmt::format("named scenario sets: {} (repeatable)", kSuiteNames));
  app.add_option("--osl", osl, "serve scenarios: output length")->check(CLI::Range(1, 1 << 20));
  app.add_option("--ttft-ms", ttft_ms, "serve scenarios: TTFT SLO in ms (0 = none)");
  app.add_option("--tpot-ms", tpot_ms, "serve scenarios: TPOT SLO in ms (0 = none)");
  app.add_flag("--ablations", standard_ablations, "add the standard ablation set");
  app.add_flag("--no-oracle", no_oracle, "skip the exact oracle");
  app.add_flag("--landscape", landscape, "count near-optimal strategies by exhaustive evaluation");
  app.add_flag("--json", json, "print one JSON document instead of tables");
  CLI11_PARSE(app, argc, argv);

  if (standard_ablations)
    ablations.insert(ablations.end(), kStandardAblations.begin(), kStandardAblations.end());
  for (const std::string& name : suites) {
    std::vector<std::string> v = SuiteScenarios(name);
    if (v.empty()) {
      fmt::print(stderr, "rl_study: unknown suite '{}' ({})\n", name, kSuiteNames);
      return 2;
    }
    scenario_texts.insert(scenario_texts.end(), v.begin(), v.end());
  }
  if (scenario_texts.empty()) {
    for (const char* m : {"gpt-moe-1.2t", "gpt-moe-1.6t"})
      for (const char* c : {"16k", "32k", "64k"}) scenario_texts.push_back(fmt::format("{}:{}", m, c));
  }
  nlohmann::json out = {{"gpu", gpu}, {"gpus", gpus}, {"budget", budget}, {"seeds", seeds},
                        {"rl", rl_spec}, {"scenarios", nlohmann::json::array()}};
  for (const std::string& text : scenario_texts) {
    StatusOr<Scenario> sc = ParseScenario(text);
    if (!sc.ok()) {
      fmt::print(stderr, "rl_study: {}\n", sc.status().message());
      return 2;
    }
    StatusOr<ModelSpec> model = LoadModel(sc->model);
    if (!model.ok()) {
      fmt::print(stderr, "rl_study: {}\n", model.status().message());
      return 2;
    }
    const std::string sc_gpu = sc->gpu.empty() ? gpu : sc->gpu;
    const int sc_gpus = sc->gpus > 0 ? sc->gpus : gpus;
    const bool preset = sc->gpus == 0 && !sc->gpu.empty();
    StatusOr<ClusterSpec> cluster = preset ? LoadCluster(sc_gpu) : MakeCluster(sc_gpu, sc_gpus);
    if (!cluster.ok()) {
      fmt::print(stderr, "rl_study: {}\n", cluster.status().message());
      return 2;
    }
    Problem p;
    p.model = *model;
    p.cluster = *cluster;
    p.workload.mode = sc->mode;
    if (sc->mode == Mode::kDecode) p.workload.context = sc->length;
    else p.workload.isl = sc->length;
    if (sc->mode == Mode::kServe) {
      p.workload.osl = osl;
      p.workload.ttft_ms = ttft_ms;
      p.workload.tpot_ms = tpot_ms;
    }
    p.workload.weight = p.model.weight_dtype;
    p.workload.max_batch = 1024;  // only used by batch=auto, which this space does not offer
    const Simulator sim(p);
    StatusOr<StrategySpace> space = StrategySpace::Make(sim.problem().model, p.cluster.num_gpus);
    if (!space.ok()) {
      fmt::print(stderr, "rl_study: {}\n", space.status().message());
      return 2;
    }
    nlohmann::json js = {{"scenario", sc->label}, {"model", sc->model}, {"length", sc->length},
                         {"mode", ModeName(sc->mode)}, {"gpu", p.cluster.gpu.name},
                         {"gpus", p.cluster.num_gpus}, {"space_size", space->Size()}};
    double oracle = 0, megatron = 0;
    std::string oracle_best;
    double oracle_s = 0;
    if (!no_oracle) {
      std::vector<Run> o = RunSeeds(sim, *space, "oracle", 1, budget, 1);
      oracle = o[0].value;
      oracle_best = o[0].best;
      oracle_s = o[0].wall_s;
      js["oracle"] = {{"value", oracle}, {"best", oracle_best}, {"wall_s", oracle_s}};
    }
    if (landscape) {
      const Landscape l = MapLandscape(sim, *space);
      js["landscape"] = {{"structurally_valid", l.structural}, {"valid", l.valid}, {"best", l.best},
                         {"within_0.1pct", l.within[0]}, {"within_1pct", l.within[1]},
                         {"within_5pct", l.within[2]}};
      if (!json) {
        fmt::print("{} landscape: {} structurally valid, {} valid, best {:.4f}; within 0.1%: {}, "
                   "1%: {}, 5%: {}\n", sc->label, l.structural, l.valid, l.best, l.within[0],
                   l.within[1], l.within[2]);
      }
    }
    std::vector<Run> mg = RunSeeds(sim, *space, "megatron", 1, budget, 1);
    megatron = mg[0].value;
    js["megatron"] = {{"value", megatron}, {"best", mg[0].best}};

    std::vector<Run> rl = RunSeeds(sim, *space, rl_spec, seeds, budget, jobs);
    std::vector<double> rl_v = Values(rl);
    std::vector<double> frac;
    int beats_megatron = 0;
    for (double v : rl_v) {
      if (oracle > 0) frac.push_back(v / oracle);
      // Equal counts as reaching it (RL rediscovering Megatron's optimum); 1e-9 relative slack for
      // the last bits of floating-point summation order.
      if (v >= megatron * (1 - 1e-9)) ++beats_megatron;
    }
    double rl_s = 0;
    for (const Run& r : rl) rl_s = std::max(rl_s, r.wall_s);
    js["rl"] = {{"spec", rl_spec}, {"runs", RunsJson(rl, oracle)}, {"mean", Mean(rl_v)},
                {"seeds_ge_megatron", beats_megatron}, {"max_wall_s", rl_s}};
    if (oracle > 0) {
      js["rl"]["median_fraction"] = Median(frac);
      js["rl"]["min_fraction"] = *std::min_element(frac.begin(), frac.end());
      js["rl"]["mean_fraction"] = Mean(frac);
      // Calls to reach 0.99 of the oracle: median and worst seed (a seed that never does counts
      // as budget + 1, i.e. "not within the budget").
      std::vector<double> c99;
      for (const Run& r : rl) {
        const int64_t c = CallsToReach(r, oracle, 0.99);
        c99.push_back(static_cast<double>(c < 0 ? budget + 1 : c));
      }
      std::sort(c99.begin(), c99.end());
      int reached = 0;
      for (double c : c99) reached += c <= static_cast<double>(budget) ? 1 : 0;
      js["rl"]["calls_to_0.99_median"] = Median(c99);
      js["rl"]["calls_to_0.99_worst"] = c99.back();
      js["rl"]["seeds_reaching_0.99"] = reached;
    }
    double rw_mean = 0;
    nlohmann::json jb = nlohmann::json::object();
    for (const std::string& b : baselines) {
      std::vector<Run> runs = RunSeeds(sim, *space, b, seeds, budget, jobs);
      const double m = Mean(Values(runs));
      if (b == "rw") rw_mean = m;
      jb[b] = {{"runs", RunsJson(runs, oracle)}, {"mean", m}};
    }
    js["baselines"] = jb;
    nlohmann::json ja = nlohmann::json::array();
    for (const std::string& a : ablations) {
      std::vector<Run> runs = RunSeeds(sim, *space, a, seeds, budget, jobs);
      std::vector<double> v = Values(runs), f;
      for (double x : v) f.push_back(oracle > 0 ? x / oracle : 0.0);
      ja.push_back({{"spec", a}, {"mean", Mean(v)}, {"mean_fraction", Mean(f)},
                    {"median_fraction", Median(f)},
                    {"min_fraction", f.empty() ? 0.0 : *std::min_element(f.begin(), f.end())},
                    {"runs", RunsJson(runs, oracle)}});
    }
    js["ablations"] = ja;
    out["scenarios"].push_back(js);

    if (!json) {
      fmt::print("== {} ({}, length {}, {} x {}; space {:.3g})\n", sc->label, ModeName(sc->mode),
                 sc->length, p.cluster.num_gpus, p.cluster.gpu.name, space->Size());
      if (oracle > 0) fmt::print("  oracle    {:10.3f} tok/s/GPU  ({:.1f} s)  {}\n", oracle, oracle_s, oracle_best);
      fmt::print("  megatron  {:10.3f} tok/s/GPU  {}\n", megatron, mg[0].best);
      fmt::print("  rl        mean {:10.3f}  vs rw {:.2f}x  >= megatron in {}/{} seeds  max {:.2f} s/search\n",
                 Mean(rl_v), rw_mean > 0 ? Mean(rl_v) / rw_mean : 0.0, beats_megatron, seeds, rl_s);
      if (oracle > 0) {
        fmt::print("            fraction of oracle: median {:.4f}  min {:.4f}  mean {:.4f}  [", Median(frac),
                   *std::min_element(frac.begin(), frac.end()), Mean(frac));
        for (double f : frac) fmt::print(" {:.3f}", f);
        fmt::print(" ]\n");
        fmt::print("            calls to 0.99 of oracle: median {}  worst {}  ({}/{} seeds within budget)\n",
                   js["rl"]["calls_to_0.99_median"].get<double>(),
                   js["rl"]["calls_to_0.99_worst"].get<double>(),
                   js["rl"]["seeds_reaching_0.99"].get<int>(), seeds);
      }
      for (const std::string& b : baselines) {
        const double m = jb[b]["mean"].get<double>();
        fmt::print("  {:9} mean {:10.3f}  vs rw {:.2f}x{}\n", b, m, rw_mean > 0 ? m / rw_mean : 0.0,
                   oracle > 0 ? fmt::format("  fraction of oracle {:.4f}", m / oracle) : "");
      }
      for (const auto& a : ja) {
        fmt::print("  ablation {}: mean fraction {:.4f}  median {:.4f}  min {:.4f}\n",
                   a["spec"].get<std::string>(), a["mean_fraction"].get<double>(),
                   a["median_fraction"].get<double>(), a["min_fraction"].get<double>());
      }
      std::fflush(stdout);
    }
  }
  if (json) fmt::print("{}\n", out.dump(2));
  return 0;
}

}  // namespace
}  // namespace l2s

int main(int argc, char** argv) { return l2s::Main(argc, argv); }
