// The searcher's hot loop must not touch the heap once buffers exist for the current row count T.
// This binary replaces malloc/calloc/realloc (glibc's documented interposition: a definition in
// the executable wins, and __libc_malloc & co. are the real allocator's exported entry points) to
// count every allocation made inside a window, including Eigen's and operator new's.
#include <gtest/gtest.h>

#include <cstddef>

#include "nn/adam.h"
#include "nn/categorical.h"
#include "nn/policy_net.h"
#include "nn/ppo.h"

#if defined(__SANITIZE_ADDRESS__)
#define L2S_NN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define L2S_NN_SANITIZED 1
#endif
#endif

#if !defined(L2S_NN_SANITIZED) && defined(__GLIBC__)
#define L2S_NN_COUNT_ALLOCS 1
namespace {
bool g_counting = false;
long g_allocs = 0;
}  // namespace
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t n) {
  if (g_counting) ++g_allocs;
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  if (g_counting) ++g_allocs;
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  if (g_counting) ++g_allocs;
  return __libc_realloc(p, n);
}
}
#endif

namespace l2s::nn {
namespace {

TEST(NnHotLoop, NoHeapAllocationAtFixedRowCount) {
#ifndef L2S_NN_COUNT_ALLOCS
  GTEST_SKIP() << "allocation counting needs glibc and no sanitizer allocator";
#else
  PolicyNetConfig c;
  c.input_dim = 20;
  c.embed_dim = 64;
  c.heads = 4;
  c.mlp_hidden = 64;
  c.head_sizes = {4, 6, 3, 5};
  c.seed = 3;
  StatusOr<PolicyNet> created = PolicyNet::Create(c);
  ASSERT_TRUE(created.ok());
  PolicyNet net = std::move(created).value();
  StatusOr<Adam> adam = Adam::Create(net.Params());
  ASSERT_TRUE(adam.ok());
  Rng rng(1);
  Mat obs(3, 20);  // [T = 3, A]
  for (Eigen::Index i = 0; i < obs.size(); ++i) obs.data()[i] = rng.Uniform();
  std::vector<bool> mask(18, true);
  mask[2] = false;
  std::vector<PolicySample> batch(2);
  for (PolicySample& s : batch) {
    s.obs = obs;
    s.mask = mask;
    s.actions = {1, 0, 2, 4};
    s.old_log_prob = -5.0;
    s.advantage = 0.3;
  }
  MultiCategorical dist;
  PpoWorkspace ws;
  std::vector<int> action(4);
  // One rollout + PPO update as the searcher would do it.
  auto iteration = [&] {
    bool ok = net.Forward(obs).ok();
    ok &= dist.Set(net.layout(), std::span<const double>(net.logits().data(), 18), mask).ok();
    for (int h = 0; h < 4; ++h) action[h] = dist.Sample(h, rng.Uniform());
    ok &= dist.LogProb(action).ok();
    for (int epoch = 0; epoch < 2; ++epoch) {
      net.ZeroGrad();
      ok &= PpoLossAndGrad(net, batch, PpoConfig{}, &ws).ok();
      adam->Step(CosineLr(1e-3, 0.0, adam->step_count(), 100));
    }
    return ok;
  };
  ASSERT_TRUE(iteration());  // warm-up: buffers sized for T = 3
  g_allocs = 0;
  g_counting = true;
  bool ok = true;
  for (int i = 0; i < 5; ++i) ok &= iteration();
  g_counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(g_allocs, 0);
  // Sanity check that the counter sees allocations at all: a new row count must resize buffers.
  g_allocs = 0;
  g_counting = true;
  const bool ok2 = net.Forward(obs.topRows(2)).ok();
  g_counting = false;
  EXPECT_TRUE(ok2);
  EXPECT_GT(g_allocs, 0);
#endif
}

}  // namespace
}  // namespace l2s::nn
