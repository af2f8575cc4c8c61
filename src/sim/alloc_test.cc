// The simulator's hot path allocates nothing: after a warm-up evaluation (which creates the
// thread-local program buffers), Evaluate performs no heap allocation, in decode with a fixed
// batch and in serve mode with batch "auto". Global operator new is replaced in this test binary
// to count allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "sim/simulator.h"
#include "strategy/space.h"
#include "strategy/test_models.h"

namespace {
std::atomic<long> g_allocs{0};
}

void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The replaced operator new allocates with malloc, so free is the matching release (g++ 12 cannot
// see that and warns).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace l2s {
namespace {

using testing::H100s;

TEST(SimulatorAlloc, EvaluateAllocatesNothing) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "allocation counting is meaningless under AddressSanitizer";
#endif
  for (Mode mode : {Mode::kDecode, Mode::kServe}) {
    for (const ModelSpec& m : {testing::DeepSeekV3(), testing::GptMoe(8), testing::Llama70B()}) {
      Problem p;
      p.model = m;
      p.cluster = H100s(64);
      p.workload.mode = mode;
      p.workload.isl = 1024;
      p.workload.osl = 256;
      Simulator sim(p);
      auto space = StrategySpace::Make(sim.problem().model, 64, SpaceOptions{});
      ASSERT_TRUE(space.ok());
      // Strategies prepared before counting (building them allocates).
      std::mt19937_64 rng(4);
      std::vector<Strategy> strategies;
      std::vector<int> idx(space->num_heads());
      std::vector<uint8_t> mask;
      for (int i = 0; i < 200; ++i) {
        for (int h = 0; h < space->num_heads(); ++h) {
          mask.assign(space->head_size(h), 0);
          space->Mask(std::span<const int>(idx.data(), h), h, mask);
          std::vector<int> ok;
          for (int j = 0; j < space->head_size(h); ++j)
            if (mask[j]) ok.push_back(j);
          idx[h] = ok[rng() % ok.size()];
        }
        Strategy s = space->Decode(idx);
        if (mode == Mode::kServe) s.batch = 0;  // auto
        strategies.push_back(s);
      }
      double sink = sim.Evaluate(strategies[0]).tokens_per_s;  // warm-up
      const long before = g_allocs.load();
      {
        // The counter itself works: a vector allocation is seen.
        std::vector<int> probe(16);
        ASSERT_GT(g_allocs.load(), before) << probe.size();
      }
      const long start = g_allocs.load();
      for (const Strategy& s : strategies) sink += sim.Evaluate(s).tokens_per_s;
      EXPECT_EQ(g_allocs.load() - start, 0) << ModeName(mode) << " " << m.name;
      volatile double keep = sink;  // keeps the evaluations from being optimised away
      (void)keep;
    }
  }
}

}  // namespace
}  // namespace l2s
