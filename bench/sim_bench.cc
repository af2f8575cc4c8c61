// Simulator throughput: evaluations per second per core over random valid strategies
// (issue targets: >= 500,000/s in decode mode with a fixed batch, >= 50,000/s in serve mode with
// batch "auto"). Reported in docs/dev/COST_MODEL.md. BM_Search* time the call searchers make
// (Simulator::EvaluateWithoutBreakdown), the others the full Evaluate the printed plan uses.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "hw/hw.h"
#include "model/presets.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

struct Fixture {
  std::unique_ptr<Simulator> sim;
  std::vector<Strategy> strategies;
};

Fixture Make(const char* model, int gpus, Mode mode, bool auto_batch) {
  Fixture f;
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster("h100", gpus);
  p.workload.mode = mode;
  p.workload.weight = p.model.weight_dtype;
  p.workload.context = 16384;
  p.workload.isl = 2048;
  p.workload.osl = 512;
  p.workload.max_batch = 512;
  f.sim = std::make_unique<Simulator>(p);
  SpaceOptions so;
  so.max_batch = 256;
  auto space = StrategySpace::Make(f.sim->problem().model, gpus, so);
  std::mt19937_64 rng(1);
  std::vector<int> idx(space->num_heads());
  std::vector<uint8_t> mask;
  for (int i = 0; i < 1024; ++i) {
    for (int h = 0; h < space->num_heads(); ++h) {
      mask.assign(space->head_size(h), 0);
      space->Mask(std::span<const int>(idx.data(), h), h, mask);
      std::vector<int> ok;
      for (int j = 0; j < space->head_size(h); ++j)
        if (mask[j]) ok.push_back(j);
      idx[h] = ok[rng() % ok.size()];
    }
    Strategy s = space->Decode(idx);
    if (auto_batch) s.batch = 0;
    f.strategies.push_back(s);
  }
  return f;
}

// breakdown = false: the searchers' call (Objective::Evaluate), without the attribution of the
// time to operators that only the printed plan reads.
void Run(benchmark::State& state, const char* model, int gpus, Mode mode, bool auto_batch,
         bool breakdown = true) {
  Fixture f = Make(model, gpus, mode, auto_batch);
  size_t i = 0;
  double sink = 0;
  for (auto _ : state) {
    const Strategy& s = f.strategies[i++ & 1023];
    const Evaluation e = breakdown ? f.sim->Evaluate(s) : f.sim->EvaluateWithoutBreakdown(s);
    sink += e.tokens_per_s;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["evals_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_DecodeFixedBatch_GptMoe16T(benchmark::State& s) { Run(s, "gpt-moe-1.6t", 1024, Mode::kDecode, false); }
void BM_DecodeFixedBatch_DeepSeekV3(benchmark::State& s) { Run(s, "deepseek-v3", 64, Mode::kDecode, false); }
void BM_DecodeFixedBatch_Llama70B(benchmark::State& s) { Run(s, "llama-3.1-70b", 16, Mode::kDecode, false); }
void BM_SearchDecodeFixedBatch_GptMoe16T(benchmark::State& s) { Run(s, "gpt-moe-1.6t", 1024, Mode::kDecode, false, false); }
void BM_SearchDecodeFixedBatch_DeepSeekV3(benchmark::State& s) { Run(s, "deepseek-v3", 64, Mode::kDecode, false, false); }
void BM_SearchDecodeFixedBatch_Llama70B(benchmark::State& s) { Run(s, "llama-3.1-70b", 16, Mode::kDecode, false, false); }
void BM_ServeAutoBatch_GptMoe16T(benchmark::State& s) { Run(s, "gpt-moe-1.6t", 1024, Mode::kServe, true); }
void BM_ServeAutoBatch_DeepSeekV3(benchmark::State& s) { Run(s, "deepseek-v3", 64, Mode::kServe, true); }
void BM_ServeAutoBatch_Llama70B(benchmark::State& s) { Run(s, "llama-3.1-70b", 16, Mode::kServe, true); }

BENCHMARK(BM_DecodeFixedBatch_GptMoe16T);
BENCHMARK(BM_DecodeFixedBatch_DeepSeekV3);
BENCHMARK(BM_DecodeFixedBatch_Llama70B);
BENCHMARK(BM_SearchDecodeFixedBatch_GptMoe16T);
BENCHMARK(BM_SearchDecodeFixedBatch_DeepSeekV3);
BENCHMARK(BM_SearchDecodeFixedBatch_Llama70B);
BENCHMARK(BM_ServeAutoBatch_GptMoe16T);
BENCHMARK(BM_ServeAutoBatch_DeepSeekV3);
BENCHMARK(BM_ServeAutoBatch_Llama70B);

}  // namespace
}  // namespace l2s

BENCHMARK_MAIN();
