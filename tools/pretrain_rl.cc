// pretrain_rl: pretrains the RL searcher's shared policy (issue 14, item 3) across generated
// problems and writes the weights that `rl(warm=1)` starts from (docs/dev/RL_STUDY.md, "Pretrained
// policy").
//
//   pretrain_rl [--seed 1] [--method bc|ppo] [--epochs 60] [--batch 16] [--elite-obs 2]
//               [--lr 3e-3] [--cache FILE] [--init FILE] [--passes 2] [--budget 300]
//               [--out-cc src/search/rl_pretrained.cc] [--out-weights FILE] [--list]
//
// Shipped weights: `pretrain_rl --out-cc src/search/rl_pretrained.cc` (all defaults; ~3 min of
// CPU on one core, most of it the exact oracle of every training problem).
//
// Problems: every training model x training cluster x workload below (the presets but
// kHeldOutModels x kTrainGpus x kTrainCounts x Workloads()), those where Megatron's heuristic
// finds no valid plan left out (606 problems). Held out (never trained on; the warm-vs-cold study):
// the models kHeldOutModels and every cluster of h200 GPUs or of 16 or 64 GPUs.
//
// --method bc (default): behaviour cloning. Each problem's exact optimum (the oracle) is the
// target; Adam minimises the mean over problems of -log pi(optimum | observation) under the
// masked per-head distributions the searcher samples from, for an observation without elites and
// --elite-obs observations of three random valid strategies (so the elite features learn what
// they can add instead of staying at their random initialisation); minibatches of --batch
// problems, --epochs epochs, lr cosine-annealed from --lr to 0. --cache keeps the optima in a file
// (read when it exists): the oracle runs are most of the time.
//
// --method ppo: one RL search per problem (the shared network, weights carried from the previous
// problem, no restarts, no elite prior and no sweeps, so every call is a policy sample PPO learns
// from), problems shuffled by --seed, --passes times. PPO continues across problems; Adam's
// moments restart per problem. Measured worse than no pretraining (docs/dev/RL_STUDY.md); kept to
// reproduce that result.
//
// Deterministic for its seed (problem order, initial weights, random elites, sampling), one
// thread; --init starts from given weights, --passes 0 only converts --init to --out-cc.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "hw/hw.h"
#include "model/presets.h"
#include "nn/adam.h"
#include "nn/categorical.h"
#include "nn/option_scorer.h"
#include "nn/rng.h"
#include "search/rl.h"
#include "search/rl_features.h"
#include "search/search.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

// Held out of training: these models, GPU type and GPU counts (docs/dev/RL_STUDY.md, warm start).
const std::vector<std::string> kHeldOutModels = {"llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b",
                                                 "kimi-k2"};
const std::vector<std::string> kTrainGpus = {"h100", "a100", "b200", "h20"};  // not h200
const std::vector<int> kTrainCounts = {8, 32, 128};                          // not 16, 64

struct TrainProblem {
  std::string label;
  Problem problem;
};

// Decode at 2k / 8k / 32k context, prefill of 2k / 8k prompts, serve 2k in / 512 out under
// TTFT 2 s / TPOT 50 ms (the serve problems of docs/dev/RESULTS.md).
std::vector<Workload> Workloads(const ModelSpec& m) {
  std::vector<Workload> out;
  for (int64_t ctx : {2048, 8192, 32768}) {
    Workload w;
    w.mode = Mode::kDecode;
    w.context = ctx;
    out.push_back(w);
  }
  for (int64_t isl : {2048, 8192}) {
    Workload w;
    w.mode = Mode::kPrefill;
    w.isl = isl;
    out.push_back(w);
  }
  Workload s;
  s.mode = Mode::kServe;
  s.isl = 2048;
  s.osl = 512;
  s.ttft_ms = 2000;
  s.tpot_ms = 50;
  out.push_back(s);
  for (Workload& w : out) {
    w.weight = m.weight_dtype;
    w.max_batch = 1024;
  }
  return out;
}

std::string WorkloadLabel(const Workload& w) {
  const int64_t len = w.mode == Mode::kDecode ? w.context : w.isl;
  return fmt::format("{}k:{}", len / 1024, ModeName(w.mode));
}

// Every training problem with a valid Megatron plan, in a fixed order.
std::vector<TrainProblem> TrainingProblems(bool verbose) {
  std::vector<TrainProblem> out;
  for (const std::string& name : ModelPresetNames()) {
    if (std::find(kHeldOutModels.begin(), kHeldOutModels.end(), name) != kHeldOutModels.end())
      continue;
    StatusOr<ModelSpec> model = ModelPreset(name);
    if (!model.ok()) continue;
    for (const std::string& gpu : kTrainGpus) {
      for (int gpus : kTrainCounts) {
        StatusOr<ClusterSpec> cluster = MakeCluster(gpu, gpus);
        if (!cluster.ok()) continue;
        for (const Workload& w : Workloads(*model)) {
          TrainProblem tp;
          tp.label = fmt::format("{}:{}@{}x{}", name, WorkloadLabel(w), gpus, gpu);
          tp.problem = Problem{*model, *cluster, w};
          const Simulator sim(tp.problem);
          StatusOr<StrategySpace> space = StrategySpace::Make(sim.problem().model, gpus);
          if (!space.ok()) continue;
          StatusOr<std::unique_ptr<Searcher>> mg = MakeSearcher("megatron");
          if (!mg.ok()) continue;
          const SearchResult r = (*mg)->Search(sim, *space, 1, 0, nullptr);
          if (!r.found) {
            if (verbose) fmt::print("  skipped (no valid Megatron plan): {}\n", tp.label);
            continue;
          }
          out.push_back(std::move(tp));
        }
      }
    }
  }
  return out;
}

// SplitMix64 step (as rl.cc's seed derivation).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 0..n-1 in a random order (Fisher-Yates with rng).
std::vector<int> ShuffledOrder(size_t n, nn::Rng& rng) {
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  for (size_t i = n; i > 1; --i) {
    const size_t j = std::min(i - 1, static_cast<size_t>(rng.Uniform() * static_cast<double>(i)));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

// One behaviour-cloning example: a training problem's option features, its exact optimum
// (oracle) as the target of every head, the prefix mask of that target (the distribution the
// searcher samples each head from), and observations to score it under.
struct BcExample {
  std::unique_ptr<nn::OptionScorer> net;  // this problem's view of the shared weights
  std::vector<int> target;                // [heads] the oracle's strategy, encoded
  std::vector<bool> mask;                 // [K] allowed options along the target's prefix
  std::vector<nn::Mat> obs;               // observations (no elite; random elites)
};

// A uniformly drawn structurally valid strategy (each head uniform over its prefix mask).
std::vector<int> RandomValid(const StrategySpace& space, nn::Rng& rng) {
  std::vector<int> idx(space.num_heads(), 0);
  std::vector<uint8_t> m;
  for (int h = 0; h < space.num_heads(); ++h) {
    m.assign(space.head_size(h), 0);
    space.Mask(std::span<const int>(idx.data(), h), h, m);
    std::vector<int> ok;
    for (int i = 0; i < space.head_size(h); ++i)
      if (m[i]) ok.push_back(i);
    idx[h] = ok.empty() ? 0
                        : ok[std::min(ok.size() - 1,
                                      static_cast<size_t>(rng.Uniform() * static_cast<double>(ok.size())))];
  }
  return idx;
}

// The searcher's observation (rl.h) of these elites: one one-hot row each (value column 0).
nn::Mat Observation(const StrategySpace& space, const std::vector<std::vector<int>>& elites) {
  int k = 0;
  for (int s : space.head_sizes()) k += s;
  nn::Mat obs = nn::Mat::Zero(std::max<Eigen::Index>(1, static_cast<Eigen::Index>(elites.size())), k + 1);
  for (size_t r = 0; r < elites.size(); ++r) {
    int off = 0;
    for (int h = 0; h < space.num_heads(); ++h) {
      obs(static_cast<Eigen::Index>(r), off + elites[r][h]) = 1;
      off += space.head_size(h);
    }
  }
  return obs;
}

// Behaviour cloning: Adam on the mean over examples of -log pi(oracle's strategy | obs), every
// example's observations in turn (no elite, then `elite_obs` sets of three random valid
// strategies, so the elite features are trained to add what they can rather than left at their
// random initialisation). Minibatches of `batch` examples in an order shuffled per epoch.
// Returns the mean loss of the last epoch.
double TrainBc(std::vector<BcExample>& ex, std::vector<double>* w, int epochs, int batch,
               double lr, nn::Rng& rng) {
  std::vector<double> grad(w->size(), 0.0);
  nn::ParamRef ref{"scorer", w->data(), grad.data(), w->size()};
  nn::AdamConfig cfg;
  cfg.max_grad_norm = 1.0;
  StatusOr<nn::Adam> adam = nn::Adam::Create({ref}, cfg);
  if (!adam.ok()) return -1;
  nn::MultiCategorical dist;
  std::vector<int> order(ex.size());
  const int64_t steps_per_epoch = (static_cast<int64_t>(ex.size()) + batch - 1) / batch;
  const int64_t total = steps_per_epoch * epochs;
  double last_loss = 0;
  for (int e = 0; e < epochs; ++e) {
    order = ShuffledOrder(order.size(), rng);
    double loss_sum = 0;
    int64_t loss_n = 0;
    for (size_t start = 0; start < order.size(); start += batch) {
      const size_t end = std::min(order.size(), start + batch);
      std::fill(grad.begin(), grad.end(), 0.0);
      int64_t n = 0;
      for (size_t b = start; b < end; ++b) n += static_cast<int64_t>(ex[order[b]].obs.size());
      for (size_t b = start; b < end; ++b) {
        BcExample& x = ex[order[b]];
        (void)x.net->SetWeights({RlFeatureCount(), kRlScorerHidden, *w});
        x.net->ZeroGrad();
        for (const nn::Mat& obs : x.obs) {
          (void)x.net->Forward(obs);
          const nn::Vec& logits = x.net->logits();
          if (!dist.Set(x.net->layout(), std::span<const double>(logits.data(), logits.size()), x.mask).ok())
            continue;
          StatusOr<double> lp = dist.LogProb(x.target);
          if (!lp.ok()) continue;
          loss_sum -= *lp;
          ++loss_n;
          nn::Vec dl = nn::Vec::Zero(logits.size());
          dist.AddLogProbGrad(x.target, -1.0 / static_cast<double>(n),
                              std::span<double>(dl.data(), dl.size()));
          (void)x.net->Backward(dl);
        }
        size_t at = 0;
        for (const nn::ParamRef& p : x.net->Params()) {
          for (size_t i = 0; i < p.size; ++i) grad[at + i] += p.grad[i];
          at += p.size;
        }
      }
      adam->Step(nn::CosineLr(lr, 0.0, adam->step_count(), total));
    }
    last_loss = loss_n > 0 ? loss_sum / static_cast<double>(loss_n) : 0;
    fmt::print(stderr, "bc epoch {}: mean -log pi(optimum) {:.4f}\n", e + 1, last_loss);
  }
  return last_loss;
}

std::string GeneratedSource(const nn::ScorerWeights& w, const std::string& command) {
  std::string s = fmt::format(
      "// Generated by tools/pretrain_rl; do not edit. Regenerate with:\n//   {}\n"
      "// The shared RL policy's pretrained weights (nn::OptionScorer, {} features per option, {} "
      "hidden units,\n// {} values): see docs/dev/RL_STUDY.md, \"Pretrained policy\".\n"
      "#include <iterator>\n\n#include \"search/rl_features.h\"\n\nnamespace l2s {{\n\nnamespace {{\n"
      "constexpr int kFeatures = {};\nconstexpr int kHidden = {};\nconstexpr double kValues[] = {{\n",
      command, w.features, w.hidden, w.values.size(), w.features, w.hidden);
  for (size_t i = 0; i < w.values.size(); ++i)
    s += fmt::format("{}{:.17g},{}", i % 4 == 0 ? "    " : " ", w.values[i],
                     i % 4 == 3 || i + 1 == w.values.size() ? "\n" : "");
  s += "};\n}  // namespace\n\nconst nn::ScorerWeights* PretrainedRlWeights() {\n"
       "  static const nn::ScorerWeights kWeights{kFeatures, kHidden,\n"
       "                                          std::vector<double>(std::begin(kValues), "
       "std::end(kValues))};\n  return &kWeights;\n}\n\n}  // namespace l2s\n";
  return s;
}

int Main(int argc, char** argv) {
  CLI::App app{"pretrain_rl: pretrain the RL searcher's shared policy across problems"};
  uint64_t seed = 1;
  int passes = 2;
  int64_t budget = 300;
  double lr = 3e-3;
  std::string out_cc, out_weights, init;
  bool list = false;
  std::string method = "bc";
  std::string cache;
  int epochs = 60, batch = 16, elite_obs = 2;
  app.add_option("--seed", seed, "training seed (problem order, network init, sampling)");
  app.add_option("--passes", passes, "passes over the training problems (0: only convert --init)")
      ->check(CLI::Range(0, 100));
  app.add_option("--init", init, "start from these weights (text, --out-weights) instead of random");
  app.add_option("--budget", budget, "simulator calls per training search")
      ->check(CLI::Range(8, 100000));
  app.add_option("--lr", lr, "Adam learning rate (cosine-annealed over each search)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out-cc", out_cc, "write the weights as C++ source (src/search/rl_pretrained.cc)");
  app.add_option("--out-weights", out_weights, "write the weights as text (nn/option_scorer.h)");
  app.add_flag("--list", list, "print the training problems and exit");
  app.add_option("--method", method, "bc (behaviour cloning of each problem's optimum) or ppo")
      ->check(CLI::IsMember({"bc", "ppo"}));
  app.add_option("--cache", cache,
                 "bc: file of the training optima (read when it exists, else written): the oracle "
                 "runs take most of the time");
  app.add_option("--epochs", epochs, "bc: epochs over the problems")->check(CLI::Range(1, 100000));
  app.add_option("--batch", batch, "bc: problems per Adam step")->check(CLI::Range(1, 100000));
  app.add_option("--elite-obs", elite_obs, "bc: observations with random elites per problem")
      ->check(CLI::Range(0, 100));
  CLI11_PARSE(app, argc, argv);

  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<TrainProblem> problems = TrainingProblems(list);
  if (list) {
    for (const TrainProblem& p : problems) fmt::print("{}\n", p.label);
    fmt::print("{} training problems\n", problems.size());
    return 0;
  }
  RlOptions o;
  o.warm = 2;  // the shared network from --init or its own random weights, never the shipped ones
  if (!init.empty()) {
    std::ifstream f(init);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    StatusOr<nn::ScorerWeights> w = nn::ScorerWeightsFromText(text);
    if (!f || !w.ok()) {
      fmt::print(stderr, "pretrain_rl: --init {}: {}\n", init,
                 w.ok() ? std::string("cannot read") : w.status().message());
      return 2;
    }
    if (w->features != RlFeatureCount()) {
      fmt::print(stderr, "pretrain_rl: --init {}: {} features per option, this build {}\n", init,
                 w->features, RlFeatureCount());
      return 2;
    }
    o.warm_weights = w->values;
    o.warm_hidden = w->hidden;
  }
  o.restarts = false;
  o.prior = 0;
  o.prior0 = 0;
  o.sweep = false;
  o.lr = lr;
  std::vector<int> order(problems.size());
  nn::Rng rng(Mix(seed ^ 0x7072657472ULL));
  int64_t searches = 0;
  if (method == "bc" && passes > 0) {
    if (o.warm_weights.empty()) {
      const Simulator sim(problems[0].problem);
      StatusOr<StrategySpace> space =
          StrategySpace::Make(sim.problem().model, problems[0].problem.cluster.num_gpus);
      StatusOr<std::unique_ptr<nn::OptionScorer>> net =
          MakeRlScorer(sim.problem(), *space, nullptr, Mix(seed));
      o.warm_weights = (*net)->Weights().values;
      o.warm_hidden = kRlScorerHidden;
    }
    std::vector<BcExample> ex;
    // label -> encoded optimum (--cache)
    std::map<std::string, std::vector<int>> cached;
    if (!cache.empty()) {
      std::ifstream f(cache);
      std::string line;
      while (std::getline(f, line)) {
        std::istringstream in(line);
        std::string label;
        in >> label;
        std::vector<int> t;
        for (int v; in >> v;) t.push_back(v);
        cached[label] = t;
      }
    }
    const bool write_cache = !cache.empty() && cached.empty();
    std::ofstream cache_out;
    if (write_cache) cache_out.open(cache);
    for (const TrainProblem& tp : problems) {
      const Simulator sim(tp.problem);
      StatusOr<StrategySpace> space =
          StrategySpace::Make(sim.problem().model, tp.problem.cluster.num_gpus);
      if (!space.ok()) continue;
      BcExample x;
      if (auto it = cached.find(tp.label); it != cached.end()) {
        x.target = it->second;
        if (static_cast<int>(x.target.size()) != space->num_heads()) continue;
      } else {
        StatusOr<std::unique_ptr<Searcher>> oracle = MakeSearcher("oracle");
        const SearchResult r = (*oracle)->Search(sim, *space, 1, 0, nullptr);
        if (!r.found || !space->Encode(Canonical(sim.problem().model, r.best), &x.target)) continue;
        if (write_cache) {
          cache_out << tp.label;
          for (int v : x.target) cache_out << ' ' << v;
          cache_out << '\n';
        }
      }
      ++searches;
      StatusOr<std::unique_ptr<nn::OptionScorer>> net =
          MakeRlScorer(sim.problem(), *space, nullptr, 0);
      if (!net.ok()) continue;
      x.net = std::move(net).value();
      for (int h = 0; h < space->num_heads(); ++h) {
        std::vector<uint8_t> m(space->head_size(h), 0);
        space->Mask(std::span<const int>(x.target.data(), h), h, m);
        for (uint8_t v : m) x.mask.push_back(v != 0);
      }
      x.obs.push_back(Observation(*space, {}));
      for (int j = 0; j < elite_obs; ++j) {
        std::vector<std::vector<int>> el;
        for (int e = 0; e < 3; ++e) el.push_back(RandomValid(*space, rng));
        x.obs.push_back(Observation(*space, el));
      }
      ex.push_back(std::move(x));
    }
    fmt::print(stderr, "bc: {} examples (oracle optima), {:.0f} s\n", ex.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    TrainBc(ex, &o.warm_weights, epochs, batch, lr, rng);
    passes = 0;  // PPO passes below are skipped
  }
  for (int pass = 0; pass < passes; ++pass) {
    order = ShuffledOrder(order.size(), rng);
    double frac_sum = 0;
    for (size_t n = 0; n < order.size(); ++n) {
      const TrainProblem& tp = problems[order[n]];
      const Simulator sim(tp.problem);
      StatusOr<StrategySpace> space =
          StrategySpace::Make(sim.problem().model, tp.problem.cluster.num_gpus);
      if (!space.ok()) continue;
      RlSearcher rl(o);
      const uint64_t s = Mix(Mix(seed) ^ Mix(static_cast<uint64_t>(pass) * 1000003ULL + n));
      const SearchResult r = rl.Search(sim, *space, budget, s, nullptr);
      ++searches;
      if (!rl.last_stats().final_weights.empty()) {
        o.warm_weights = rl.last_stats().final_weights;
        o.warm_hidden = o.warm_hidden > 0 ? o.warm_hidden : kRlScorerHidden;
      }
      // Progress: mean of (best found / first valid value) over the pass so far is not
      // comparable across problems; print the valid fraction of the latest search instead.
      const RlStats& st = rl.last_stats();
      frac_sum += st.proposals > 0 ? 1.0 - static_cast<double>(st.invalid) / st.proposals : 0;
      if ((n + 1) % 100 == 0 || n + 1 == order.size())
        fmt::print(stderr, "pass {} problem {}/{}: valid proposals {:.3f} (mean so far), {:.0f} s\n",
                   pass + 1, n + 1, order.size(), frac_sum / static_cast<double>(n + 1),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      (void)r;
    }
  }
  if (o.warm_weights.empty()) {
    fmt::print(stderr, "pretrain_rl: no weights (--passes 0 needs --init)\n");
    return 2;
  }
  const nn::ScorerWeights w{RlFeatureCount(), o.warm_hidden, o.warm_weights};
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("pretrain_rl: {} problems, {} {}, {} weights, {:.0f} s\n", problems.size(), searches,
             method == "bc" ? "oracle optima cloned" : fmt::format("searches of {} calls", budget),
             w.values.size(), secs);
  const std::string command =
      method == "bc"
          ? fmt::format("pretrain_rl --seed {} --method bc --epochs {} --batch {} --elite-obs {} "
                        "--lr {}{} --out-cc ...", seed, epochs, batch, elite_obs, lr,
                        init.empty() ? "" : " --init " + init)
          : fmt::format("pretrain_rl --seed {} --method ppo --passes {} --budget {} --lr {}{} "
                        "--out-cc ...", seed, passes, budget, lr,
                        init.empty() ? "" : " --init " + init);
  if (!out_weights.empty()) {
    std::ofstream f(out_weights);
    f << nn::ScorerWeightsToText(w);
    if (!f) {
      fmt::print(stderr, "pretrain_rl: cannot write {}\n", out_weights);
      return 1;
    }
  }
  if (!out_cc.empty()) {
    std::ofstream f(out_cc);
    f << GeneratedSource(w, command);
    if (!f) {
      fmt::print(stderr, "pretrain_rl: cannot write {}\n", out_cc);
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace l2s

int main(int argc, char** argv) { return l2s::Main(argc, argv); }
