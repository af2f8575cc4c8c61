// Cost of one kernel / collective model call (the simulator makes ~50 per model evaluation and
// targets >= 500,000 evaluations per second, so each call must stay in the tens of nanoseconds).
// Shapes rotate through a small fixed set so the branch predictor and the frexp knots see variety.
#include <array>

#include <benchmark/benchmark.h>

#include "sim/collectives.h"
#include "sim/kernels.h"
#include "sim/moe_load.h"

namespace {

l2s::GpuSpec H100() {
  l2s::GpuSpec g;
  g.name = "h100";
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.hbm_bytes = 80.0 * l2s::kGiB;
  g.hbm_bw = 3.35e12;
  g.nvlink_bw = 450e9;
  g.calibration = "h100_sxm";
  return g;
}

constexpr std::array<double, 8> kTokens = {1, 7, 64, 130, 512, 2048, 8192, 30000};

void BM_Gemm(benchmark::State& state) {
  const l2s::GpuSpec gpu = H100();
  const l2s::DType w = static_cast<l2s::DType>(state.range(0));
  size_t i = 0;
  for (auto _ : state) {
    const double m = kTokens[i++ & 7];
    benchmark::DoNotOptimize(l2s::GemmSeconds(gpu, m, 7168, 2048, w, 1));
  }
}
BENCHMARK(BM_Gemm)->Arg(0)->Arg(1)->Arg(2);

void BM_AttnPrefill(benchmark::State& state) {
  const l2s::GpuSpec gpu = H100();
  size_t i = 0;
  for (auto _ : state) {
    const double s = kTokens[i++ & 7];
    benchmark::DoNotOptimize(
        l2s::AttnPrefillSeconds(gpu, 4, s, 32, 8, 128, 0, l2s::DType::kBF16));
  }
}
BENCHMARK(BM_AttnPrefill);

void BM_AttnDecode(benchmark::State& state) {
  const l2s::GpuSpec gpu = H100();
  size_t i = 0;
  for (auto _ : state) {
    const double kv = kTokens[i++ & 7];
    benchmark::DoNotOptimize(l2s::AttnDecodeSeconds(gpu, 64, kv, 32, 8, 128, 0, l2s::DType::kFP8));
  }
}
BENCHMARK(BM_AttnDecode);

void BM_MlaDecode(benchmark::State& state) {
  const l2s::GpuSpec gpu = H100();
  size_t i = 0;
  for (auto _ : state) {
    const double kv = kTokens[i++ & 7];
    benchmark::DoNotOptimize(l2s::MlaDecodeSeconds(gpu, 64, kv, 16, 512, 64, l2s::DType::kBF16));
  }
}
BENCHMARK(BM_MlaDecode);

void BM_Elementwise(benchmark::State& state) {
  const l2s::GpuSpec gpu = H100();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(l2s::ElementwiseSeconds(gpu, kTokens[i++ & 7] * 14336));
  }
}
BENCHMARK(BM_Elementwise);

void BM_Collective(benchmark::State& state) {
  l2s::ClusterSpec c;
  c.gpu = H100();
  c.num_gpus = 64;
  c.gpus_per_domain = 8;
  c.scaleout_bw = 50e9;
  c.scaleout_latency = 5e-6;
  const l2s::CollKind kind = static_cast<l2s::CollKind>(state.range(0));
  const l2s::GroupPlacement g{static_cast<int>(state.range(1)), static_cast<int>(state.range(2))};
  size_t i = 0;
  for (auto _ : state) {
    const double bytes = kTokens[i++ & 7] * 7168 * 2;
    benchmark::DoNotOptimize(l2s::CollectiveSeconds(c, kind, g, bytes, true));
  }
}
// {kind, n, n_domains}: TP all-reduce in a node, across 4 nodes; EP dispatch in / across nodes.
BENCHMARK(BM_Collective)
    ->Args({0, 8, 1})
    ->Args({0, 32, 4})
    ->Args({1, 8, 1})
    ->Args({3, 16, 2})
    ->Args({5, 8, 1})
    ->Args({5, 32, 4})
    ->Args({4, 2, 2});

void BM_MoeSamplingImbalance(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(l2s::MoeSamplingImbalance(kTokens[i++ & 7] * 8, 32));
  }
}
BENCHMARK(BM_MoeSamplingImbalance);

}  // namespace

BENCHMARK_MAIN();
