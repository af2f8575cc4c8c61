// Search costs on the paper's largest setting: gpt-moe-1.6t decoding at 16k context on 24,576
// H100s, batch options 1..1024 (powers of two).
//   BM_Oracle_GptMoe16T_24576  - the exact oracle over the whole space (target <= 60 s on one
//                                core); counters: space size, structurally valid points, degree
//                                configs, ComputeOpTotals calls, optimum (tokens/s per GPU)
//   BM_Oracle_DeepSeekV3_Serve_256 - the oracle with every operator group present (MLA, shared
//                                experts, dense + MoE layers), serve mode with TPOT/TTFT SLOs
//   BM_Sa4000 / BM_Local4000 - 4,000-call budgeted searches on the gpt-moe-1.6t
//                                problem (local: the plan's default searcher, target <= 1 s)
// Results are reported in docs/dev/SEARCH.md.
#include <benchmark/benchmark.h>

#include <memory>

#include "paper_setting.h"
#include "search/oracle.h"
#include "search/search.h"
#include "search/test_util.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {
namespace {

using bench::PaperSetting;

PaperSetting MakePaperSetting() { return bench::MakePaperSetting("gpt-moe-1.6t", 24576); }

void BM_Oracle_GptMoe16T_24576(benchmark::State& state) {
  PaperSetting f = MakePaperSetting();
  OracleStats stats;
  SearchResult r;
  for (auto _ : state) r = SolveExact(*f.sim, *f.space, nullptr, &stats);
  state.counters["space_size"] = stats.space_size;
  state.counters["valid"] = stats.valid_count;
  state.counters["degree_configs"] = static_cast<double>(stats.degree_configs);
  state.counters["op_totals_calls"] = static_cast<double>(stats.op_totals_calls);
  state.counters["composed"] = static_cast<double>(stats.composed);
  state.counters["best_tok_s_gpu"] = r.eval.tokens_per_s_per_gpu;
  state.SetLabel(r.found ? ToText(r.best) : "no valid strategy");
}

// A harder structure: MLA, shared experts, dense + MoE layer kinds (every operator group
// present), serve mode (TTFT pass per configuration) with TPOT and TTFT SLOs.
void BM_Oracle_DeepSeekV3_Serve_256(benchmark::State& state) {
  Problem p = testing::RealServe("deepseek-v3", "h100", 256);
  p.workload.max_batch = 256;
  Simulator sim(std::move(p));
  SpaceOptions so;
  so.max_batch = 256;
  auto space = StrategySpace::Make(sim.problem().model, 256, so);
  OracleStats stats;
  SearchResult r;
  for (auto _ : state) r = SolveExact(sim, *space, nullptr, &stats);
  state.counters["space_size"] = stats.space_size;
  state.counters["valid"] = stats.valid_count;
  state.counters["degree_configs"] = static_cast<double>(stats.degree_configs);
  state.counters["op_totals_calls"] = static_cast<double>(stats.op_totals_calls);
  state.counters["composed"] = static_cast<double>(stats.composed);
  state.counters["best_tok_s_gpu"] = r.eval.tokens_per_s_per_gpu;
  state.SetLabel(r.found ? ToText(r.best) : "no valid strategy");
}

void RunBudgeted(benchmark::State& state, const char* spec) {
  PaperSetting f = MakePaperSetting();
  auto searcher = MakeSearcher(spec);
  if (!searcher.ok()) {
    state.SkipWithError(searcher.status().message().c_str());
    return;
  }
  SearchResult r;
  uint64_t seed = 1;
  for (auto _ : state) r = (*searcher)->Search(*f.sim, *f.space, 4000, seed++, nullptr);
  state.counters["calls"] = static_cast<double>(r.calls);
  state.counters["best_tok_s_gpu"] = r.eval.tokens_per_s_per_gpu;
}

void BM_Sa4000(benchmark::State& state) { RunBudgeted(state, "sa"); }
void BM_Local4000(benchmark::State& state) { RunBudgeted(state, "local"); }

BENCHMARK(BM_Oracle_GptMoe16T_24576)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_Oracle_DeepSeekV3_Serve_256)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_Sa4000)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Local4000)->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace l2s

BENCHMARK_MAIN();
