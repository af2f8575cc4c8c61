// Policy-network cost for the RL searcher: forward, forward+backward, Adam step, and the per-call
// cost of a search loop shaped like the paper's PPO (rollout buffer 2, 2 gradient steps per update),
// at embed_dim 64 / 128 / 256 with T = 3 elites.
//
//   build-dir/src/nn/nn_bench [--benchmark_filter=...]
//
// Shapes: 12 heads {7,7,7,12,3 x 8} (K = 57: TP/EP/PP/batch plus eight 3-way operator choices), so
// A = K + 1 = 58 (one-hot sub-actions + normalised throughput), matching the observation of
// PAPER.md "Policy". mlp_hidden = embed_dim, 4 attention heads.
#include <benchmark/benchmark.h>

#include <vector>

#include "nn/adam.h"
#include "nn/categorical.h"
#include "nn/policy_net.h"
#include "nn/ppo.h"

namespace {

using l2s::nn::Adam;
using l2s::nn::Mat;
using l2s::nn::MultiCategorical;
using l2s::nn::PolicyNet;
using l2s::nn::PolicyNetConfig;
using l2s::nn::PolicySample;
using l2s::nn::PpoConfig;
using l2s::nn::PpoWorkspace;
using l2s::nn::Rng;
using l2s::nn::Vec;

constexpr int kRows = 3;  // T: elites in the observation (the paper's T = 3)

PolicyNetConfig BenchConfig(int embed_dim) {
  PolicyNetConfig c;
  c.head_sizes = {7, 7, 7, 12, 3, 3, 3, 3, 3, 3, 3, 3};
  c.input_dim = 58;
  c.embed_dim = embed_dim;
  c.heads = 4;
  c.mlp_hidden = embed_dim;
  c.seed = 1;
  return c;
}

Mat RandomObs(Rng& rng) {
  Mat obs(kRows, 58);
  for (Eigen::Index i = 0; i < obs.size(); ++i) obs.data()[i] = rng.Uniform() < 0.2 ? 1.0 : 0.0;
  return obs;
}

void BM_Forward(benchmark::State& state) {
  PolicyNet net = std::move(PolicyNet::Create(BenchConfig(static_cast<int>(state.range(0))))).value();
  Rng rng(1);
  const Mat obs = RandomObs(rng);
  for (auto _ : state) {
    benchmark::DoNotOptimize(net.Forward(obs).ok());
    benchmark::DoNotOptimize(net.logits().data());
  }
  state.counters["params"] = static_cast<double>(l2s::nn::CountParams(net.Params()));
}
BENCHMARK(BM_Forward)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMicrosecond);

void BM_ForwardBackward(benchmark::State& state) {
  PolicyNet net = std::move(PolicyNet::Create(BenchConfig(static_cast<int>(state.range(0))))).value();
  Rng rng(2);
  const Mat obs = RandomObs(rng);
  const Vec dlogits = Vec::Constant(net.num_logits(), 0.01);
  for (auto _ : state) {
    benchmark::DoNotOptimize(net.Forward(obs).ok());
    benchmark::DoNotOptimize(net.Backward(dlogits).ok());
  }
}
BENCHMARK(BM_ForwardBackward)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMicrosecond);

void BM_AdamStep(benchmark::State& state) {
  PolicyNet net = std::move(PolicyNet::Create(BenchConfig(static_cast<int>(state.range(0))))).value();
  Adam adam = std::move(Adam::Create(net.Params())).value();
  for (auto _ : state) benchmark::DoNotOptimize(adam.Step(1e-12));
}
BENCHMARK(BM_AdamStep)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMicrosecond);

// One iteration = two searcher calls: two sampling forwards (+ masked distribution, one sample per
// head), then one PPO update on those two samples with two gradient steps (ZeroGrad, loss+grad,
// Adam). The counter s_per_4000_calls extrapolates the network's share of a 4,000-call search.
void BM_SearchLoop(benchmark::State& state) {
  PolicyNet net = std::move(PolicyNet::Create(BenchConfig(static_cast<int>(state.range(0))))).value();
  Adam adam = std::move(Adam::Create(net.Params())).value();
  Rng rng(3);
  std::vector<PolicySample> batch(2);
  for (PolicySample& s : batch) s.obs = RandomObs(rng);
  MultiCategorical dist;
  PpoWorkspace ws;
  const PpoConfig cfg;
  const int heads = net.layout().num_heads();
  for (auto _ : state) {
    for (PolicySample& s : batch) {
      (void)net.Forward(s.obs);
      (void)dist.Set(net.layout(), std::span<const double>(net.logits().data(), net.num_logits()), {});
      s.actions.resize(heads);
      for (int h = 0; h < heads; ++h) s.actions[h] = dist.Sample(h, rng.Uniform());
      s.old_log_prob = *dist.LogProb(s.actions);
      s.advantage = rng.Uniform(-1.0, 1.0);
    }
    for (int epoch = 0; epoch < 2; ++epoch) {
      net.ZeroGrad();
      (void)l2s::nn::PpoLossAndGrad(net, batch, cfg, &ws);
      adam.Step(1e-3);
    }
  }
  state.counters["s_per_4000_calls"] = benchmark::Counter(
      static_cast<double>(state.iterations()) / 2000.0,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SearchLoop)->Arg(64)->Arg(128)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
