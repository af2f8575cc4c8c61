// Cost of the RL searcher: one 4,000-call search (the paper's budget) on a paper scenario,
// gpt-moe-1.2t decoding at 16k context on 1,024 H100s, batch options 1..1024. Target: <= 1 s of
// CPU on one core for the default searcher (issue 14; docs/dev/RL_STUDY.md, "Speed").
//   BM_Rl4000/<spec>  - 0: the default "rl" (policy for half the budget, then refine), 1: the
//                       paper's configuration "rl(paper=1)", 2: the paper-sized network
//                       (d = 256) of it for comparison; counters: best tokens/s per GPU, calls,
//                       proposals/s.
// The time includes the simulator calls; BM_Simulate4000 is the simulator's share alone
// (4,000 masked uniform proposals, the same number of Evaluate calls).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "paper_setting.h"
#include "hw/hw.h"
#include "model/presets.h"
#include "nn/rng.h"
#include "search/search.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

constexpr int64_t kBudget = 4000;  // the paper's simulator-call budget

using bench::PaperSetting;

PaperSetting MakeSetting() { return bench::MakePaperSetting("gpt-moe-1.2t", 1024); }

const std::vector<std::string>& Specs() {
  static const std::vector<std::string> specs = {
      "rl", "rl(paper=1)", "rl(paper=1,embed=256,hidden=256)"};
  return specs;
}

void BM_Rl4000(benchmark::State& state) {
  const std::string& spec = Specs()[static_cast<size_t>(state.range(0))];
  PaperSetting f = MakeSetting();
  auto searcher = MakeSearcher(spec);
  if (!searcher.ok()) {
    state.SkipWithError(searcher.status().message().c_str());
    return;
  }
  SearchResult r;
  uint64_t seed = 1;
  for (auto _ : state) r = (*searcher)->Search(*f.sim, *f.space, kBudget, seed++, nullptr);
  state.counters["best_tok_s_gpu"] = r.eval.tokens_per_s_per_gpu;
  state.counters["calls"] = static_cast<double>(r.calls);
  state.counters["proposals_per_s"] =
      benchmark::Counter(static_cast<double>(r.calls) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.SetLabel(spec);
}
BENCHMARK(BM_Rl4000)->DenseRange(0, 2)->Unit(benchmark::kSecond)->Iterations(2);

// The simulator's share: 4,000 prefix-masked uniform proposals evaluated.
void BM_Simulate4000(benchmark::State& state) {
  PaperSetting f = MakeSetting();
  const int heads = f.space->num_heads();
  std::vector<int> idx(heads);
  std::vector<uint8_t> mask(64);
  nn::Rng rng(1);
  double sum = 0;
  for (auto _ : state) {
    for (int64_t c = 0; c < kBudget; ++c) {
      for (int h = 0; h < heads; ++h) {
        const int n = f.space->head_size(h);
        f.space->Mask(std::span<const int>(idx.data(), h), h, std::span<uint8_t>(mask.data(), n));
        int allowed = 0;
        for (int i = 0; i < n; ++i) allowed += mask[i];
        int pick = static_cast<int>(rng.Uniform() * allowed);
        for (int i = 0; i < n; ++i) {
          if (mask[i] && pick-- == 0) {
            idx[h] = i;
            break;
          }
        }
      }
      sum += f.sim->Evaluate(f.space->Decode(idx)).tokens_per_s_per_gpu;
    }
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_Simulate4000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace l2s

BENCHMARK_MAIN();
