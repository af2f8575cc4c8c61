// search_study: the search layer's evidence (issue 47). Generates a problem set by a fixed rule
// and seed from the catalogue (model presets x GPU presets x GPU counts x modes x lengths x
// SLOs, drawn uniformly; a drawn problem is kept when the exact oracle solves it within its work
// bound and finds a valid plan), solves each exactly, and runs searchers on it over seeds at
// each budget, writing one CSV row per run (ratio = found / optimum, 0 when nothing valid).
// `table` turns rows into the markdown tables of docs/dev/SEARCH.md.
//
//   search_study problems --set 2 --count 30             # the set, one line per problem
//   search_study run --set 2 --count 30 --seeds 5 --budgets 1000,4000
//       --searchers local,local(without=pair),rl,sa,rw [--shard 0/2] > rows.csv   (one line)
//   search_study table rows.csv ...                       # markdown, per searcher and budget
//
// Set 1 is the design set (moves and defaults were tuned on it); set 2 judges (docs/dev/SEARCH.md).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hw/hw.h"
#include "model/presets.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "search/sampling.h"
#include "search/search.h"
#include "plan/work_bound.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

constexpr int64_t kOracleBound = 6'000'000;  // calls (~20 s of one core)

struct Drawn {
  std::string text;  // one line naming it
  Problem problem;
};

template <class T>
const T& PickOf(Rng& rng, const std::vector<T>& v) {
  return v[rng.Uniform(static_cast<int>(v.size()))];
}

// The draw rule of set `set`: problem k is the k-th kept draw of Rng(1000003 * set).
Drawn Draw(Rng& rng) {
  static const std::vector<std::string> models = ModelPresetNames();
  static const std::vector<std::string> gpus = GpuPresetNames();
  static const std::vector<int> counts = {8, 16, 32, 64, 128};
  Drawn d;
  Problem& p = d.problem;
  const std::string model = PickOf(rng, models);
  const std::string gpu = PickOf(rng, gpus);
  const int n = PickOf(rng, counts);
  p.model = *ModelPreset(model);
  StatusOr<ClusterSpec> c = MakeCluster(gpu, n);
  p.cluster = c.ok() ? *c : *MakeCluster("h100", n);
  p.workload.weight = p.model.weight_dtype;
  const int mode = rng.Uniform(3);
  const int slo = rng.Uniform(3);
  std::string w;
  if (mode == 0) {
    p.workload.mode = Mode::kServe;
    p.workload.isl = PickOf(rng, std::vector<int64_t>{1024, 2048, 8192});
    p.workload.osl = PickOf(rng, std::vector<int64_t>{256, 1024});
    if (slo == 1) p.workload.ttft_ms = 2000, p.workload.tpot_ms = 50;
    if (slo == 2) p.workload.ttft_ms = 1000, p.workload.tpot_ms = 20;
    w = fmt::format("serve {}/{}", p.workload.isl, p.workload.osl);
  } else if (mode == 1) {
    p.workload.mode = Mode::kDecode;
    p.workload.context = PickOf(rng, std::vector<int64_t>{4096, 16384});
    if (slo == 1) p.workload.tpot_ms = 50;
    if (slo == 2) p.workload.tpot_ms = 20;
    w = fmt::format("decode ctx {}", p.workload.context);
  } else {
    p.workload.mode = Mode::kPrefill;
    p.workload.isl = PickOf(rng, std::vector<int64_t>{2048, 8192});
    if (slo >= 1) p.workload.ttft_ms = slo == 1 ? 2000 : 500;
    w = fmt::format("prefill {}", p.workload.isl);
  }
  std::string s;
  if (p.workload.ttft_ms > 0) s += fmt::format(" ttft<={}ms", p.workload.ttft_ms);
  if (p.workload.tpot_ms > 0) s += fmt::format(" tpot<={}ms", p.workload.tpot_ms);
  d.text = fmt::format("{} on {} {}: {}{}", model, n, p.cluster.gpu.name, w, s);
  return d;
}

struct Solved {
  Drawn d;
  StrategySpace space;
  std::unique_ptr<Simulator> sim;
  double optimum = 0;
  std::string best;
};

// The first `count` kept problems of set `set` (all of them built; skipped draws counted).
std::vector<std::unique_ptr<Solved>> MakeSet(int set, int count, bool verbose) {
  Rng rng(1000003ull * static_cast<uint64_t>(set));
  std::vector<std::unique_ptr<Solved>> out;
  int none = 0, bound = 0;
  while (static_cast<int>(out.size()) < count) {
    Drawn d = Draw(rng);
    auto sim = std::make_unique<Simulator>(d.problem);
    StatusOr<StrategySpace> space = StrategySpace::Make(
        sim->problem().model, sim->problem().cluster.num_gpus, plan::PlanSpaceOptions(sim->problem()));
    if (!space.ok()) {
      ++none;
      continue;
    }
    WorkBoundObserver wb(nullptr, kOracleBound);
    SearchResult r = SolveExact(*sim, *space, &wb);
    if (wb.bound_hit()) {
      ++bound;
      if (verbose) std::cerr << "skip (oracle bound): " << d.text << "\n";
      continue;
    }
    if (!r.found) {
      ++none;
      if (verbose) std::cerr << "skip (no valid plan): " << d.text << "\n";
      continue;
    }
    auto s = std::make_unique<Solved>(Solved{std::move(d), std::move(*space), std::move(sim),
                                             r.eval.tokens_per_s_per_gpu, ToText(r.best)});
    if (verbose)
      std::cerr << fmt::format("problem {}: {} (optimum {:.2f}, {:.1e} strategies)\n", out.size(),
                               s->d.text, s->optimum, s->space.Size());
    out.push_back(std::move(s));
  }
  if (verbose)
    std::cerr << fmt::format("set {}: {} kept, {} without a valid plan, {} past the oracle's bound\n",
                             set, count, none, bound);
  return out;
}

std::vector<std::string> SplitTop(const std::string& s, char sep) {
  // Splits on `sep` outside parentheses.
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char ch : s) {
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (ch == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

int Usage() {
  std::cerr << "usage: search_study problems|run|table ... (see the file's header)\n";
  return 2;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string cmd = argv[1];
  std::map<std::string, std::string> opt = {{"--set", "2"},      {"--count", "30"},
                                            {"--seeds", "5"},    {"--budgets", "1000,4000"},
                                            {"--searchers", "local"}, {"--shard", "0/1"}, {"--problem", "0"}};
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && i + 1 < argc) {
      opt[a] = argv[++i];
    } else {
      files.push_back(a);
    }
  }
  if (cmd == "table") {
    // rows: problem,searcher,budget,seed,ratio
    std::map<std::pair<std::string, int64_t>, std::map<int, std::vector<double>>> by;
    std::vector<std::pair<std::string, int64_t>> order;
    for (const std::string& f : files) {
      std::ifstream in(f);
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> c = SplitTop(line, ',');
        if (c.size() < 5 || c[0] == "problem") continue;
        const std::pair<std::string, int64_t> key{c[1], std::stoll(c[2])};
        if (!by.count(key)) order.push_back(key);
        by[key][std::stoi(c[0])].push_back(std::stod(c[4]));
      }
    }
    std::cout << "| searcher | budget | problems | worst seed >= 0.99 | worst seed >= 0.98 | "
                 "min worst seed | mean |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& key : order) {
      int n = 0, p99 = 0, p98 = 0;
      double minw = 1e9, sum = 0;
      int runs = 0;
      for (const auto& [prob, v] : by[key]) {
        const double w = *std::min_element(v.begin(), v.end());
        ++n;
        p99 += w >= 0.99;
        p98 += w >= 0.98;
        minw = std::min(minw, w);
        for (double x : v) sum += x, ++runs;
      }
      std::cout << fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.4f} |\n", key.first,
                               key.second, n, p99, p98, minw, sum / std::max(1, runs));
    }
    return 0;
  }
  const int set = std::stoi(opt["--set"]);
  const int count = std::stoi(opt["--count"]);
  int shard = 0, shards = 1;
  if (std::sscanf(opt["--shard"].c_str(), "%d/%d", &shard, &shards) != 2 || shards < 1) return Usage();
  if (cmd == "problems") {
    auto set_p = MakeSet(set, count, true);
    for (size_t i = 0; i < set_p.size(); ++i)
      std::cout << fmt::format("| {} | {} | {:.2f} | {:.1e} |\n", i, set_p[i]->d.text,
                               set_p[i]->optimum, set_p[i]->space.Size());
    return 0;
  }
  if (cmd == "show") {  // one problem's optimum and each run's best: --problem K
    auto problems = MakeSet(set, count, false);
    const Solved& s = *problems.at(std::stoul(opt["--problem"]));
    std::cout << s.d.text << "\noracle " << fmt::format("{:.2f}", s.optimum) << " " << s.best << "\n";
    for (const std::string& spec : SplitTop(opt["--searchers"], ','))
      for (int seed = 0; seed < std::stoi(opt["--seeds"]); ++seed) {
        SearchResult r = (*MakeSearcher(spec))->Search(*s.sim, s.space,
                                                       std::stoll(opt["--budgets"]), seed, nullptr);
        std::cout << fmt::format("{} seed {}: {:.4f} {}\n", spec, seed,
                                 r.eval.tokens_per_s_per_gpu / s.optimum, ToText(r.best));
      }
    return 0;
  }
  if (cmd != "run") return Usage();
  auto problems = MakeSet(set, count, false);
  std::vector<int64_t> budgets;
  for (const std::string& b : SplitTop(opt["--budgets"], ',')) budgets.push_back(std::stoll(b));
  const int seeds = std::stoi(opt["--seeds"]);
  std::cout << "problem,searcher,budget,seed,ratio\n";
  for (size_t i = 0; i < problems.size(); ++i) {
    if (static_cast<int>(i % shards) != shard) continue;
    const Solved& s = *problems[i];
    for (const std::string& spec : SplitTop(opt["--searchers"], ',')) {
      auto searcher = MakeSearcher(spec);
      if (!searcher.ok()) {
        std::cerr << searcher.status().message() << "\n";
        return 2;
      }
      for (int64_t budget : budgets)
        for (int seed = 0; seed < seeds; ++seed) {
          SearchResult r = (*searcher)->Search(*s.sim, s.space, budget, seed, nullptr);
          const double ratio = r.found ? r.eval.tokens_per_s_per_gpu / s.optimum : 0.0;
          std::cout << fmt::format("{},{},{},{},{:.5f}\n", i, spec, budget, seed, ratio)
                    << std::flush;
        }
    }
    std::cerr << fmt::format("done problem {}\n", i);
  }
  return 0;
}

}  // namespace
}  // namespace l2s

int main(int argc, char** argv) { return l2s::Main(argc, argv); }
