// The memory lower bound (memory_bound.h) against the simulator: hand-derived cases, then the
// invariant over random strategies of real problems (every layer kind with a cache: GQA, MLA,
// sliding windows, linear attention and Mamba state; decode, serve and prefill; two-batch
// overlap, MTP, pipelines).
#include "search/memory_bound.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/hw.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "search/sampling.h"
#include "strategy/space.h"
#include "strategy/strategy.h"

namespace l2s {
namespace {

TEST(MemoryBound, HandDerivedCases) {
  // 10 GB of weights and reserve, 40 GB of caches at batch 8, an 80 GB GPU.
  const MemoryAtBatch m{8, 10e9, 40e9, 80e9, /*proportional_below=*/true};
  // Larger batches hold at least the caches of batch 8: 10 + 40 = 50 GB (not a miss).
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(m, 16), 50e9);
  EXPECT_FALSE(CertainMemoryMiss(m, 16));
  // Batch 4 divides 8: at least half the caches, 10 + 20 = 30 GB; batch 2: 10 + 10 = 20 GB.
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(m, 4), 30e9);
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(m, 2), 20e9);
  // Batch 3 does not divide 8, 12 is no multiple of it: only the weights and reserve are certain.
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(m, 3), 10e9);
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(m, 12), 10e9);
  // Serve mode: nothing of the caches is certain below batch 8.
  MemoryAtBatch serve = m;
  serve.proportional_below = false;
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(serve, 4), 10e9);
  EXPECT_DOUBLE_EQ(MemoryLowerBoundBytes(serve, 16), 50e9);
  // 50 GB of caches at batch 8 with 40 GB fixed: batch 16 holds at least 90 GB > 80: a miss;
  // batch 4 at least 40 + 25 = 65 GB: not certain.
  const MemoryAtBatch big{8, 40e9, 50e9, 80e9, true};
  EXPECT_TRUE(CertainMemoryMiss(big, 16));
  EXPECT_FALSE(CertainMemoryMiss(big, 4));
  // Weights alone above the capacity: every batch misses.
  const MemoryAtBatch heavy{4, 90e9, 1e9, 80e9, true};
  EXPECT_TRUE(CertainMemoryMiss(heavy, 1));
  EXPECT_TRUE(CertainMemoryMiss(heavy, 3));
}

TEST(MemoryBound, OnlyEvaluationsThatReachTheMemoryCheck) {
  Evaluation e;
  e.verdict = Verdict::kStructure;
  e.batch = 4;
  e.mem_capacity_bytes = 80e9;
  EXPECT_FALSE(MemoryOf(e, Mode::kDecode).has_value());
  e.verdict = Verdict::kTpot;
  e.weight_bytes = 1, e.reserve_bytes = 2, e.kv_bytes = 3, e.state_bytes = 4;
  const std::optional<MemoryAtBatch> m = MemoryOf(e, Mode::kDecode);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->proportional_below);
  EXPECT_FALSE(MemoryOf(e, Mode::kServe)->proportional_below);
  EXPECT_EQ(m->batch, 4);
  EXPECT_DOUBLE_EQ(m->fixed_bytes, 3);
  EXPECT_DOUBLE_EQ(m->cache_bytes, 7);
  e.batch = 0;
  EXPECT_FALSE(MemoryOf(e, Mode::kDecode).has_value());
}

struct Case {
  std::string model;  // preset name, or a file under shared/models/hf
  std::string gpu;
  int gpus;
  Mode mode;
};

ModelSpec Load(const std::string& name) {
  StatusOr<ModelSpec> m = ModelPreset(name);
  if (m.ok()) return *m;
  StatusOr<ModelSpec> f = LoadHfConfig(std::string(L2S_SHARED_DIR) + "/models/hf/" + name);
  EXPECT_TRUE(f.ok()) << name << ": " << f.status().ToString();
  return f.ok() ? *f : ModelSpec{};
}

// For random structurally valid strategies, every pair of batch options (b, b'): the bound from
// the evaluation at b never exceeds the memory the simulator finds at b' without activations,
// so a "certain miss" is a miss.
TEST(MemoryBound, NeverAboveTheSimulatorsMemory) {
  const std::vector<Case> cases = {
      {"deepseek-v3", "h800", 144, Mode::kDecode},
      {"kimi-k2", "h200", 64, Mode::kServe},
      {"gpt-moe-1.2t", "h100", 1024, Mode::kDecode},
      {"llama-3.1-70b", "h100", 16, Mode::kPrefill},
      {"gpt-oss-120b", "h100", 8, Mode::kServe},
      {"Qwen--Qwen3-Next-80B-A3B-Thinking.json", "h100", 16, Mode::kServe},
      {"nvidia--Nemotron-H-56B-Base-8K.json", "h100", 8, Mode::kDecode},
  };
  int checked = 0, misses = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model);
    Problem p;
    p.model = Load(c.model);
    if (p.model.num_layers == 0) continue;
    StatusOr<ClusterSpec> cluster = MakeCluster(c.gpu, c.gpus);
    ASSERT_TRUE(cluster.ok());
    p.cluster = *cluster;
    p.workload.mode = c.mode;
    p.workload.weight = p.model.weight_dtype;
    p.workload.context = 8192;
    p.workload.isl = 2048;
    p.workload.osl = 512;
    const Simulator sim(p);
    SpaceOptions so;
    so.max_batch = 1024;
    if (p.model.mtp_layers > 0) so.mtp = {0, 1};
    StatusOr<StrategySpace> space = StrategySpace::Make(p.model, c.gpus, so);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    MaskedSampler sampler(*space);
    Rng rng(7);
    const std::vector<int>& batches = space->batch_options();
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<int> idx;
      sampler.Sample(rng, &idx);
      const Strategy s = space->Decode(idx);
      std::vector<Evaluation> at(batches.size());
      for (size_t i = 0; i < batches.size(); ++i) at[i] = sim.EvaluateAtBatch(s, batches[i]);
      for (size_t i = 0; i < batches.size(); ++i) {
        const std::optional<MemoryAtBatch> m = MemoryOf(at[i], c.mode);
        if (!m) continue;
        for (size_t j = 0; j < batches.size(); ++j) {
          const Evaluation& t = at[j];
          if (j == i || t.verdict == Verdict::kStructure) continue;
          const double bound = MemoryLowerBoundBytes(*m, batches[j]);
          // The worst stage at b' holds at least what the stage that was worst at b holds.
          EXPECT_LE(bound, t.mem_bytes * (1 + 1e-12))
              << ToText(s) << " from batch " << batches[i] << " to " << batches[j];
          if (CertainMemoryMiss(*m, batches[j])) {
            EXPECT_EQ(t.verdict, Verdict::kMemory) << ToText(s) << " batch " << batches[j];
            ++misses;
          }
          ++checked;
        }
      }
    }
  }
  // The invariant was exercised, certain misses included (154,000 pairs, 25,674 certain misses).
  EXPECT_GT(checked, 100000);
  EXPECT_GT(misses, 10000);
}

}  // namespace
}  // namespace l2s
