// The aggregated replicas' sizing (plan/replica_sizing.h) as `l2s plan` runs it: every instance
// size the cluster tiles into that holds the weights, planned as the plan plans it (the engines'
// table without --engine; the searcher on the unrestricted space for --engine ideal). Reported in
// docs/dev/PLANNER.md "Measured"; the bound is plan time no worse than 2x.
#include <benchmark/benchmark.h>

#include "hw/hw.h"
#include "model/presets.h"
#include "engine/engine.h"
#include "plan/capacity.h"
#include "plan/pareto.h"
#include "plan/replica_sizing.h"
#include "plan/space.h"
#include "serve/workload.h"

namespace l2s::plan {
namespace {

Problem Serve(const char* model, ClusterSpec cluster, DType weight, int isl, int osl,
              double ttft_ms, double tpot_ms) {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = std::move(cluster);
  p.workload.mode = Mode::kServe;
  p.workload.weight = weight;
  p.workload.isl = isl;
  p.workload.osl = osl;
  p.workload.ttft_ms = ttft_ms;
  p.workload.tpot_ms = tpot_ms;
  return p;
}

void Run(benchmark::State& state, const Problem& p, engine::EngineId id, bool tabulate) {
  int sizes = 0, chosen = 0;
  for (auto _ : state) {
    StatusOr<ReplicaSizing> r = SizeAggregatedReplicas(p, id, tabulate, 0, AggRequest{}, -1);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    sizes = static_cast<int>(r->choice.trials.size());
    chosen = r->choice.gpus_per_instance;
  }
  state.counters["sizes"] = sizes;
  state.counters["gpus_per_instance"] = chosen;
}

// DeepSeek-V3 FP4 on one GB300 NVL72 rack, 8k / 1k, TPOT 25 ms: 12 sizes, the engines' table.
void BM_Gb300RackTable(benchmark::State& state) {
  Run(state, Serve("deepseek-v3", *LoadCluster("gb300-nvl72"), DType::kFP4, 8192, 1024, 10000, 25),
      engine::EngineId::kIdeal, true);
}
// DeepSeek-V3 FP8 on 128 H100s, 4k / 512, TTFT 2 s, TPOT 50 ms (the README's example): 8 sizes.
void BM_DeepSeek128H100Table(benchmark::State& state) {
  Run(state, Serve("deepseek-v3", *MakeCluster("h100", 128), DType::kFP8, 4096, 512, 2000, 50),
      engine::EngineId::kIdeal, true);
}
// gpt-moe-1.6t decoding at 16k on 1,024 H100s, the unrestricted space (`--engine ideal` of the
// README's default): the searcher on each of the 5 sizes that hold the weights.
void BM_GptMoe1024H100Ideal(benchmark::State& state) {
  Problem p;
  p.model = *ModelPreset("gpt-moe-1.6t");
  p.cluster = *MakeCluster("h100", 1024);
  p.workload.mode = Mode::kDecode;
  p.workload.weight = p.model.weight_dtype;
  p.workload.context = 16384;
  Run(state, p, engine::EngineId::kIdeal, false);
}
// plan --pareto's aggregated series with its replicas (plan/pareto.h) on N threads (the argument):
// Qwen3-30B-A3B on 8 H100s, 1k / 256, TPOT 30 ms, 16 limits; the points are the same for every N
// (pareto_test), the wall time falls with the threads. Reported in docs/PLAN.md "--pareto".
void BM_ParetoQwen3Moe8H100(benchmark::State& state) {
  const Problem p = Serve("qwen3-30b-a3b", *MakeCluster("h100", 8), DType::kBF16, 1024, 256, 0, 30);
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 8, PlanSpaceOptions(p, -1));
  if (!space.ok()) {
    state.SkipWithError(space.status().message().c_str());
    return;
  }
  AggregatedSweepOptions opt;
  opt.jobs = static_cast<int>(state.range(0));
  size_t points = 0;
  for (auto _ : state) {
    std::vector<double> limits;
    StatusOr<ParetoSeries> s = AggregatedParetoSeries(p, *space, opt, nullptr, &limits);
    if (!s.ok()) {
      state.SkipWithError(s.status().message().c_str());
      return;
    }
    const ParetoSeries r = WithReplicas(
        *s, p,
        [](const Problem& q) {
          return StrategySpace::Make(q.model, q.cluster.num_gpus, PlanSpaceOptions(q, -1));
        },
        opt, nullptr);
    points = r.sweep.size();
  }
  state.counters["points"] = static_cast<double>(points);
  state.counters["threads"] = static_cast<double>(opt.jobs);
}

// Disaggregated capacity sizing (plan::SizeFewest, --serving disagg) of the docs/CAPACITY.md task:
// Llama-3.1-70B FP8 on H100s with vLLM, 2,000 requests at 20 req/s, prompts lognormal around
// 4,000 (sigma 0.6), outputs around 600 (sigma 0.8), P99 TTFT 2 s and TPOT 50 ms, instance sizes
// 2, 4 and 8, the oracle's layouts. Its stream holds prompts longer than a one-GPU-per-rank
// prefill layout's KV; when such layouts were paired their pools grew towards the 4,096-GPU limit
// (over 15 minutes, no answer). Counters: the answer's GPUs, the pairs' whole-stream simulations.
void BM_CapacityDisaggLongPrompts(benchmark::State& state) {
  CapacityRequest r;
  r.problem_on_gpus = [](int gpus, const std::string& engine) -> StatusOr<Problem> {
    auto c = MakeCluster("h100", gpus);
    if (!c.ok()) return c.status();
    Problem p = Serve("llama-3.1-70b", *c, DType::kFP8, 4000, 600, 0, 0);
    if (!engine.empty()) {
      auto id = engine::ParseEngineId(engine);
      if (!id.ok()) return id.status();
      p.workload.engine = engine::SchedulerOf(*id);
      p.workload.max_batch = DefaultsOf(p.workload.engine).max_batch;
      SetEngineFigures(engine, &p.workload);
    }
    return p;
  };
  r.engine = "vllm";
  r.sizes_gpus = {2, 4, 8};
  r.search = "oracle";
  r.serving = Serving::kDisagg;
  r.slos = *serve::ParseSlos("p99_ttft_ms=2000,p99_tpot_ms=50");
  serve::WorkloadSpec w;
  w.rate_rps = 20;
  w.num_requests = 2000;
  w.isl = 4000;
  w.osl = 600;
  w.isl_dist = *serve::ParseLengthDist("lognormal:0.6");
  w.osl_dist = *serve::ParseLengthDist("lognormal:0.8");
  r.requests = *serve::GenerateRequests(w);
  int gpus = 0, simulations = 0;
  for (auto _ : state) {
    StatusOr<FewestOutcome> o = SizeFewest(r);
    if (!o.ok() || !o->any_found) {
      state.SkipWithError(o.ok() ? "no answer" : o.status().message().c_str());
      return;
    }
    gpus = o->gpus;
    simulations = 0;
    for (const serve::DisaggSizeResult& c : o->dres->candidates) simulations += c.simulations;
  }
  state.counters["gpus"] = gpus;
  state.counters["simulations"] = simulations;
}

BENCHMARK(BM_CapacityDisaggLongPrompts)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Gb300RackTable)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_ParetoQwen3Moe8H100)
    ->Arg(1)
    ->Arg(2)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK(BM_DeepSeek128H100Table)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_GptMoe1024H100Ideal)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace l2s::plan

BENCHMARK_MAIN();
