// The local searcher against the exact oracle on real problems (model presets on real GPUs, the
// space `l2s plan` searches), its spec's errors, and the ablation switch. The problems are from
// the design set of the search study (docs/dev/SEARCH_SETS.md, set 1), so they check that what the
// study measured still holds, not that the searcher generalises (set 2 does that).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "hw/hw.h"
#include "model/presets.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "search/search.h"

namespace l2s {
namespace {

struct Case {
  const char* model;
  const char* gpu;
  int gpus;
  Mode mode;
  int64_t len;  // isl (prefill, serve) or context (decode)
  double ttft_ms, tpot_ms;
};

Problem Make(const Case& c) {
  Problem p;
  p.model = *ModelPreset(c.model);
  p.cluster = *MakeCluster(c.gpu, c.gpus);
  p.workload.mode = c.mode;
  p.workload.weight = p.model.weight_dtype;
  if (c.mode == Mode::kDecode) {
    p.workload.context = c.len;
  } else {
    p.workload.isl = c.len;
    p.workload.osl = 256;
  }
  p.workload.ttft_ms = c.ttft_ms;
  p.workload.tpot_ms = c.tpot_ms;
  return p;
}

TEST(LocalSearcher, ReachesTheOptimumOfDesignSetProblemsInEverySeed) {
  const Case cases[] = {
      {"llama-3.1-70b", "h200", 8, Mode::kPrefill, 8192, 2000, 0},     // set 1, problem 7
      {"llama-3.1-405b", "h200", 32, Mode::kDecode, 4096, 0, 50},      // problem 2
      {"llama-4-maverick", "mi355x", 128, Mode::kDecode, 4096, 0, 20},  // problem 3: tp 1 -> 8
  };
  for (const Case& c : cases) {
    Simulator sim(Make(c));
    StatusOr<StrategySpace> space = StrategySpace::Make(
        sim.problem().model, sim.problem().cluster.num_gpus, plan::PlanSpaceOptions(sim.problem()));
    ASSERT_TRUE(space.ok());
    const SearchResult opt = SolveExact(sim, *space, nullptr);
    ASSERT_TRUE(opt.found) << c.model;
    auto local = MakeSearcher("local");
    ASSERT_TRUE(local.ok());
    for (uint64_t seed = 0; seed < 3; ++seed) {
      const SearchResult r = (*local)->Search(sim, *space, 4000, seed, nullptr);
      ASSERT_TRUE(r.found) << c.model << " seed " << seed;
      EXPECT_LE(r.calls, 4000);
      EXPECT_GE(r.eval.tokens_per_s_per_gpu, 0.99 * opt.eval.tokens_per_s_per_gpu)
          << c.model << " on " << c.gpus << " " << c.gpu << ", seed " << seed << ": "
          << ToText(r.best) << " vs the optimum " << ToText(opt.best);
    }
  }
}

TEST(LocalSearcher, SpecErrorsAreOneLineNamingTheProblem) {
  auto bad = MakeSearcher("local(without=nope)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "local: unknown move 'nope' in without=; moves: batch, degree, pair, dim, group, "
            "recipe, option, crossover, restart, regroup");
  bad = MakeSearcher("local(without=batch+degree+pair+dim+group+recipe+option+crossover+restart+"
                     "regroup)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "local: without= removes every move");
  bad = MakeSearcher("local(patience=0)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "local: patience must be in 1..1000000, got 0");
  bad = MakeSearcher("local(temperature=1)");
  ASSERT_FALSE(bad.ok());
  auto ok = MakeSearcher("local(patience=40,without=pair+crossover)");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->name(), "local(patience=40,without=pair+crossover)");
  EXPECT_EQ((*MakeSearcher("local"))->name(), "local(patience=80)");
}

TEST(LocalSearcher, LeavingAMoveOutChangesTheSearch) {
  // The ablation switch acts: without the degree moves (and everything else equal) the search on
  // a problem with several degree options takes another path.
  Simulator sim(Make({"llama-3.1-405b", "h200", 32, Mode::kDecode, 4096, 0, 50}));
  StatusOr<StrategySpace> space = StrategySpace::Make(
      sim.problem().model, sim.problem().cluster.num_gpus, plan::PlanSpaceOptions(sim.problem()));
  ASSERT_TRUE(space.ok());
  const SearchResult all = (*MakeSearcher("local"))->Search(sim, *space, 300, 1, nullptr);
  const SearchResult without =
      (*MakeSearcher("local(without=degree+regroup+pair)"))->Search(sim, *space, 300, 1, nullptr);
  const bool same_trace =
      all.trace.size() == without.trace.size() &&
      std::equal(all.trace.begin(), all.trace.end(), without.trace.begin(),
                 [](const TracePoint& a, const TracePoint& b) {
                   return a.call == b.call && a.value == b.value;
                 });
  EXPECT_FALSE(same_trace);
}

}  // namespace
}  // namespace l2s
