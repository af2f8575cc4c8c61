// Request-level serving simulator speed (issue 45 targets: 10,000 requests of a DeepSeek-V3
// wide-EP plan in <= 1 s on one core, 100,000 in <= 10 s). Each iteration builds a fresh
// ServeSim (cold step-cost memo, KV capacity computed) and simulates the whole stream. Reported
// in docs/CAPACITY.md.
#include <benchmark/benchmark.h>

#include <memory>

#include "hw/hw.h"
#include "model/presets.h"
#include "serve/capacity.h"
#include "serve/serve_sim.h"
#include "serve/stats.h"
#include "serve/step_cost.h"
#include "serve/workload.h"
#include "strategy/strategy.h"

namespace l2s::serve {
namespace {

// DeepSeek-V3 FP8 on 32 H100s, attention DP 32 x expert parallel 32 with 288 expert slots
// (wide EP), SGLang; open loop at 12 req/s with lognormal lengths around 2,000 / 500 tokens.
void BM_DeepSeekWideEp(benchmark::State& state) {
  const int64_t n = state.range(0);
  Problem p;
  p.model = *ModelPreset("deepseek-v3");
  p.cluster = *MakeCluster("h100", 32);
  p.workload.weight = DType::kFP8;
  p.workload.kv = DType::kFP8;
  p.workload.engine = Engine::kSglang;
  const Strategy s = *FromText("tp=1,dp=32,ep=32,slots=288", 32);
  auto cost = StepCost::Make(p, s);
  if (!cost.ok()) {
    state.SkipWithError(cost.status().message().c_str());
    return;
  }
  WorkloadSpec w;
  w.rate_rps = 12;  // ~65% of the Simulator's serve-mode 18.5 req/s for this plan
  w.num_requests = n;
  w.isl = 2000;
  w.osl = 500;
  w.isl_dist = *ParseLengthDist("lognormal:0.5");
  w.osl_dist = *ParseLengthDist("lognormal:0.5");
  const auto reqs = *GenerateRequests(w);
  int64_t steps = 0, calls = 0;
  bool unstable = false;
  for (auto _ : state) {
    auto sim = ServeSim::Make(cost->get(), ServeOptions{}, 2000, 500);
    const ServeRun run = (*sim)->Run(reqs);
    steps = run.steps;
    calls = run.cost_calls;
    unstable = run.unstable;
    benchmark::DoNotOptimize(run.requests.data());
  }
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["step_cost_calls"] = static_cast<double>(calls);
  state.counters["unstable"] = unstable ? 1 : 0;
}
BENCHMARK(BM_DeepSeekWideEp)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);

// One 1-GPU instance of Llama-3.1-70B FP8 under vLLM (22,400 KV tokens): the layout both sizing
// benchmarks below size.
LayoutOption Llama70bFp8OnOneH100() {
  LayoutOption lo;
  lo.problem.model = *ModelPreset("llama-3.1-70b");
  lo.problem.cluster = *MakeCluster("h100", 1);
  lo.problem.workload.mode = Mode::kServe;
  lo.problem.workload.weight = DType::kFP8;
  lo.problem.workload.kv = DType::kFP8;
  lo.problem.workload.engine = Engine::kVllm;
  lo.strategy = *FromText("tp=1", 1);
  lo.label = "tp=1";
  return lo;
}

// FewestGpus on one layout whose first guess is far above the answer: Llama-3.1-70B FP8 on one
// H100 (22,400 KV tokens: one instance alone queues its long prompts), vLLM, 20 req/s Poisson,
// prompts uniform 0.78-1 x 4,500, outputs 0.9-1 x 1,050, P99 TTFT 2 s and TPOT 50 ms (the
// simulator's default limits: 84 instances). Counters: the answer, and the whole-stream
// simulations it took (98 when the walk down from the first guess went one count at a time,
// 14 in doubling steps + bisection; docs/CAPACITY.md).
void BM_FewestGpusFarFirstGuess(benchmark::State& state) {
  const LayoutOption lo = Llama70bFp8OnOneH100();
  WorkloadSpec w;
  w.rate_rps = 20;
  w.num_requests = 2000;
  w.isl = 4500;
  w.osl = 1050;
  w.isl_dist = *ParseLengthDist("uniform:0.78");
  w.osl_dist = *ParseLengthDist("uniform:0.9");
  const auto reqs = *GenerateRequests(w);
  const auto slos = *ParseSlos("p99_ttft_ms=2000,p99_tpot_ms=50");
  CapacityOptions opt;
  int instances = 0, simulations = 0;
  for (auto _ : state) {
    auto r = FewestGpus({lo}, reqs, slos, opt);
    if (!r.ok() || !r->found) {
      state.SkipWithError("no answer");
      return;
    }
    instances = r->candidates[0].instances;
    simulations = r->candidates[0].simulations;
  }
  state.counters["instances"] = instances;
  state.counters["simulations"] = simulations;
}
BENCHMARK(BM_FewestGpusFarFirstGuess)->Unit(benchmark::kMillisecond)->Iterations(1);

// Closed-loop sizing (CapacityOptions::concurrency): 1,024 clients of Llama-3.1-70B (FP8) on 1-GPU
// instances, 10,240 prompts: MaxClients' bisection on one instance, then the whole loop on each
// instance count tried.
void BM_FewestGpusClosedLoop(benchmark::State& state) {
  const LayoutOption lo = Llama70bFp8OnOneH100();
  WorkloadSpec w;
  w.concurrency = 1024;
  w.isl = 2048;
  w.osl = 512;
  w.isl_dist = *ParseLengthDist("uniform:0.8");
  w.osl_dist = *ParseLengthDist("uniform:0.8");
  const auto reqs = *GenerateRequests(w);
  const auto slos = *ParseSlos("p99_ttft_ms=5000,p99_tpot_ms=50");
  CapacityOptions opt;
  opt.concurrency = w.concurrency;
  int instances = 0, simulations = 0, clients = 0;
  for (auto _ : state) {
    auto r = FewestGpus({lo}, reqs, slos, opt);
    if (!r.ok() || !r->found) {
      state.SkipWithError("no answer");
      return;
    }
    instances = r->candidates[0].instances;
    simulations = r->candidates[0].simulations;
    clients = r->candidates[0].instance_max_clients;
  }
  state.counters["instances"] = instances;
  state.counters["simulations"] = simulations;
  state.counters["instance_max_clients"] = clients;
}
BENCHMARK(BM_FewestGpusClosedLoop)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace l2s::serve

BENCHMARK_MAIN();
