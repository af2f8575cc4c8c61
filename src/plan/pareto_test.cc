// The throughput-interactivity frontier (plan/pareto.h): the fast front against an O(n^2)
// reference filter on random points, the TPOT grid, and the aggregated sweep on small problems
// against brute force over every strategy of the space: each point is the best plan under its
// limit, the front is monotone and no evaluated strategy dominates a front point.
#include "plan/pareto.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "common/parallel.h"
#include "search/test_util.h"

namespace l2s {
namespace {

ParetoPoint Pt(double user, double gpu) {
  ParetoPoint p;
  p.tokens_per_s_per_user = user;
  p.tokens_per_s_per_gpu = gpu;
  return p;
}

// Slow reference: the points no other point dominates, duplicates (equal on both axes) kept once.
std::vector<ParetoPoint> SlowFront(const std::vector<ParetoPoint>& pts) {
  std::vector<ParetoPoint> out;
  for (size_t i = 0; i < pts.size(); ++i) {
    bool dominated = false, duplicate = false;
    for (size_t j = 0; j < pts.size() && !dominated; ++j) dominated = Dominates(pts[j], pts[i]);
    for (const ParetoPoint& q : out)
      duplicate |= q.tokens_per_s_per_user == pts[i].tokens_per_s_per_user &&
                   q.tokens_per_s_per_gpu == pts[i].tokens_per_s_per_gpu;
    if (!dominated && !duplicate) out.push_back(pts[i]);
  }
  std::sort(out.begin(), out.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return a.tokens_per_s_per_user < b.tokens_per_s_per_user;
  });
  return out;
}

TEST(ParetoFront, MatchesTheSlowFilterOnRandomPoints) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ParetoPoint> pts;
    const int n = 1 + static_cast<int>(rng() % 40);
    // Coarse integer coordinates: ties on one axis and exact duplicates happen often.
    for (int i = 0; i < n; ++i) pts.push_back(Pt(rng() % 12, rng() % 12));
    const std::vector<ParetoPoint> fast = ParetoFront(pts);
    const std::vector<ParetoPoint> slow = SlowFront(pts);
    ASSERT_EQ(fast.size(), slow.size()) << "trial " << trial;
    for (size_t i = 0; i < fast.size(); ++i) {
      EXPECT_EQ(fast[i].tokens_per_s_per_user, slow[i].tokens_per_s_per_user);
      EXPECT_EQ(fast[i].tokens_per_s_per_gpu, slow[i].tokens_per_s_per_gpu);
    }
    // Monotone: interactivity up, throughput per GPU strictly down.
    for (size_t i = 1; i < fast.size(); ++i) {
      EXPECT_GT(fast[i].tokens_per_s_per_user, fast[i - 1].tokens_per_s_per_user);
      EXPECT_LT(fast[i].tokens_per_s_per_gpu, fast[i - 1].tokens_per_s_per_gpu);
    }
  }
  EXPECT_TRUE(ParetoFront({}).empty());
}

TEST(ParetoFront, KeepsTheFirstOfEqualPoints) {
  ParetoPoint a = Pt(10, 5), b = Pt(10, 5);
  a.strategy = "first";
  b.strategy = "second";
  const std::vector<ParetoPoint> f = ParetoFront({a, b, Pt(1, 1)});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].strategy, "first");
}

TEST(TpotGrid, GeometricWithBothEnds) {
  // 10 ms to 80 ms in 4 limits: ratio 8^(1/3) = 2 per step: 10, 20, 40, 80.
  const std::vector<double> g = TpotLimitGrid(10, 80, 4);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0], 10);
  EXPECT_NEAR(g[1], 20, 1e-12);
  EXPECT_NEAR(g[2], 40, 1e-12);
  EXPECT_EQ(g[3], 80);
  EXPECT_EQ(TpotLimitGrid(50, 50, 16), std::vector<double>{50});
  EXPECT_EQ(TpotLimitGrid(60, 50, 16), std::vector<double>{50});
  EXPECT_EQ(TpotLimitGrid(10, 50, 1), std::vector<double>{50});
  EXPECT_DOUBLE_EQ(TokensPerUser(20), 50);  // 20 ms per token: 50 tokens/s
  EXPECT_EQ(TokensPerUser(0), 0);
}

TEST(SweepTpot, NamesPointsAndStopsWhenCancelled) {
  int calls = 0;
  const ParetoSeries s = SweepTpot("disaggregated", {10, 20, 30, 40}, [&](double limit) {
    ++calls;
    SweepAnswer a;
    if (limit > 10) a.point = Pt(1000 / limit, limit);  // slower limit, more throughput
    a.cancelled = limit >= 30;
    return a;
  });
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(s.cancelled);
  ASSERT_EQ(s.sweep.size(), 2u);  // 10 ms: none; 20 and 30 ms
  EXPECT_EQ(s.sweep[0].series, "disaggregated");
  EXPECT_EQ(s.sweep[1].tpot_limit_ms, 30);
  EXPECT_EQ(s.front.size(), 2u);
}

// An inexact search may answer a looser limit with less than a tighter limit's point, which is
// valid there too: every series carries that point over (exact false), so none falls as the limit
// loosens (the disaggregated series of plan --pareto, whose joint oracle rarely finishes).
TEST(SweepTpot, CarriesATighterLimitsPointOver) {
  auto at = [](double gpu, double tpot_ms, bool exact) {
    ParetoPoint p = Pt(1000 / tpot_ms, gpu);
    p.tpot_ms = tpot_ms;
    p.exact = exact;
    return p;
  };
  const ParetoSeries s = SweepTpot("disaggregated", {10, 20, 30, 40}, [&](double limit) {
    SweepAnswer a;
    if (limit == 10) a.point = at(100, 9, true);
    if (limit == 20) a.point = at(80, 19, false);   // worse than the 10 ms point
    if (limit == 40) a.point = at(120, 39, false);  // better: kept
    return a;                                        // 30 ms: nothing found
  });
  ASSERT_EQ(s.sweep.size(), 4u);
  EXPECT_EQ(s.sweep[1].tokens_per_s_per_gpu, 100);
  EXPECT_EQ(s.sweep[1].tpot_ms, 9);
  EXPECT_FALSE(s.sweep[1].exact);
  EXPECT_EQ(s.sweep[1].tpot_limit_ms, 20);
  EXPECT_EQ(s.sweep[2].tokens_per_s_per_gpu, 100);
  EXPECT_EQ(s.sweep[2].tpot_limit_ms, 30);
  EXPECT_EQ(s.sweep[3].tokens_per_s_per_gpu, 120);
  for (size_t i = 1; i < s.sweep.size(); ++i)
    EXPECT_GE(s.sweep[i].tokens_per_s_per_gpu, s.sweep[i - 1].tokens_per_s_per_gpu);
}

TEST(ParallelFor, EveryIndexOnceForEveryThreadCount) {
  for (int n : {0, 1, 5, 100})
    for (int jobs : {1, 2, 3, 8, 200}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::vector<int> order;
      ParallelFor(n, jobs, [&](int i) {
        ++seen[static_cast<size_t>(i)];
        if (jobs == 1) order.push_back(i);
      });
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(seen[static_cast<size_t>(i)].load(), 1) << n << " " << jobs;
      if (jobs == 1)
        for (int i = 0; i < n; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);  // in order
    }
}

// The answers are computed on several threads, then walked in order: the same series for every
// thread count, known points carried in as an earlier limit's would be.
TEST(SweepTpot, TheSameSeriesOnEveryThreadCountWithKnownPoints) {
  auto at = [](double gpu, double tpot_ms) {
    ParetoPoint p = Pt(1000 / tpot_ms, gpu);
    p.tpot_ms = tpot_ms;
    p.exact = true;
    return p;
  };
  std::vector<double> limits;
  for (int i = 1; i <= 24; ++i) limits.push_back(i);
  // A search whose answers wander: some limits none, some below a tighter limit's.
  auto best = [&](double limit) {
    SweepAnswer a;
    const int k = static_cast<int>(limit);
    if (k % 5 != 0) a.point = at(10.0 * k - 25.0 * (k % 3), limit - 0.5);
    return a;
  };
  const std::vector<ParetoPoint> known = {at(150, 12)};
  const ParetoSeries one = SweepTpot("s", limits, best, 1, known);
  for (int jobs : {2, 5, 24}) {
    const ParetoSeries many = SweepTpot("s", limits, best, jobs, known);
    ASSERT_EQ(many.sweep.size(), one.sweep.size());
    for (size_t i = 0; i < one.sweep.size(); ++i) {
      EXPECT_EQ(many.sweep[i].tokens_per_s_per_gpu, one.sweep[i].tokens_per_s_per_gpu);
      EXPECT_EQ(many.sweep[i].tpot_ms, one.sweep[i].tpot_ms);
      EXPECT_EQ(many.sweep[i].exact, one.sweep[i].exact);
    }
  }
  // Limit 12 answers 10*12 - 0 = 120 < the known 150 at 12 ms: the known point, not exact.
  ASSERT_GE(one.sweep.size(), 12u);
  EXPECT_EQ(one.sweep[11].tpot_limit_ms, 12);
  EXPECT_EQ(one.sweep[11].tokens_per_s_per_gpu, 150);
  EXPECT_FALSE(one.sweep[11].exact);
  // Limit 11 (10*11 - 50 = 60) cannot take the known point (12 ms > 11 ms): the previous best.
  EXPECT_EQ(one.sweep[10].tpot_limit_ms, 11);
  EXPECT_EQ(one.sweep[10].tokens_per_s_per_gpu, 90);  // limit 9: 90 - 0
  for (size_t i = 1; i < one.sweep.size(); ++i)
    EXPECT_GE(one.sweep[i].tokens_per_s_per_gpu, one.sweep[i - 1].tokens_per_s_per_gpu);
}

// Every strategy of the space at every batch, as (strategy, evaluation) with tpot > 0.
struct Evaluated {
  Strategy s;
  Evaluation e;
};
std::vector<Evaluated> EvaluateAll(const Simulator& sim, const StrategySpace& space) {
  std::vector<Evaluated> out;
  std::vector<int> idx(space.num_heads(), 0);
  while (true) {
    const Strategy s = space.Decode(idx);
    if (space.Check(s).ok()) {
      const Evaluation e = sim.EvaluateAtBatch(s, s.batch);
      if (e.valid() && e.tpot_s > 0) out.push_back({s, e});
    }
    int h = space.num_heads() - 1;
    while (h >= 0 && ++idx[h] == space.head_size(h)) idx[h--] = 0;
    if (h < 0) break;
  }
  return out;
}

void CheckSweepAgainstBruteForce(const Problem& p, const SpaceOptions& o) {
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, p.cluster.num_gpus, o);
  ASSERT_TRUE(space.ok());
  const Simulator sim(p);
  const std::vector<Evaluated> all = EvaluateAll(sim, *space);
  ASSERT_FALSE(all.empty());
  AggregatedSweepOptions opt;
  opt.oracle_calls = 0;  // no work bound: every point exact
  opt.points = 12;
  std::vector<double> limits;
  StatusOr<ParetoSeries> s = AggregatedParetoSeries(p, *space, opt, nullptr, &limits);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(limits.size(), 12u);
  // The grid's slow end is the TPOT of the unconstrained optimum.
  double best_any = 0, tpot_of_best = 0;
  for (const Evaluated& x : all)
    if (x.e.tokens_per_s_per_gpu > best_any) {
      best_any = x.e.tokens_per_s_per_gpu;
      tpot_of_best = x.e.tpot_s * 1e3;
    }
  ASSERT_FALSE(s->sweep.empty());
  EXPECT_NEAR(s->sweep.back().tokens_per_s_per_gpu, best_any, 1e-9 * best_any);
  EXPECT_NEAR(limits.back(), s->sweep.back().tpot_ms, 1e-9 * limits.back());
  (void)tpot_of_best;
  // The fast end is met by some plan: the first limit has a point.
  EXPECT_EQ(s->sweep.front().tpot_limit_ms, limits.front());
  for (const ParetoPoint& pt : s->sweep) {
    EXPECT_TRUE(pt.exact);
    EXPECT_EQ(pt.found_by, "oracle");
    EXPECT_LE(pt.tpot_ms, pt.tpot_limit_ms * (1 + 1e-9));
    EXPECT_DOUBLE_EQ(pt.tokens_per_s_per_user, 1000 / pt.tpot_ms);
    // Exact per limit: the best throughput among all strategies meeting the limit.
    double ref = 0;
    for (const Evaluated& x : all)
      if (x.e.tpot_s * 1e3 <= pt.tpot_limit_ms * (1 + 1e-9)) ref = std::max(ref, x.e.tokens_per_s_per_gpu);
    EXPECT_NEAR(pt.tokens_per_s_per_gpu, ref, 1e-9 * ref) << "limit " << pt.tpot_limit_ms;
  }
  // Monotone in the limit: a looser limit never lowers the best throughput.
  for (size_t i = 1; i < s->sweep.size(); ++i)
    EXPECT_GE(s->sweep[i].tokens_per_s_per_gpu, s->sweep[i - 1].tokens_per_s_per_gpu * (1 - 1e-12));
  // Front: no evaluated strategy is strictly better on throughput while at least as interactive
  // (ties in throughput aside: the oracle breaks them by index, not by TPOT).
  for (const ParetoPoint& f : s->front)
    for (const Evaluated& x : all)
      EXPECT_FALSE(x.e.tokens_per_s_per_gpu > f.tokens_per_s_per_gpu * (1 + 1e-9) &&
                   1 / x.e.tpot_s >= f.tokens_per_s_per_user)
          << ToText(x.s) << " dominates " << f.strategy;
  // The front agrees with the slow filter over the sweep's points.
  const std::vector<ParetoPoint> slow = SlowFront(s->sweep);
  ASSERT_EQ(s->front.size(), slow.size());
  for (size_t i = 0; i < slow.size(); ++i)
    EXPECT_EQ(s->front[i].tokens_per_s_per_gpu, slow[i].tokens_per_s_per_gpu);
  EXPECT_GE(s->front.size(), 2u);  // the grid spans a real trade-off
}

TEST(AggregatedSweep, ExactPerLimitAgainstBruteForceDense) {
  Problem p = testing::MakeProblem(testing::TinyDense(2), 4, Mode::kServe);
  SpaceOptions o;
  o.max_batch = 8;
  CheckSweepAgainstBruteForce(p, o);
}

TEST(AggregatedSweep, ExactPerLimitAgainstBruteForceMoeDecode) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 4, Mode::kDecode);
  SpaceOptions o;
  o.max_batch = 8;
  o.search_sp = false;
  o.search_slots = false;
  o.search_overlap = false;
  CheckSweepAgainstBruteForce(p, o);
}

TEST(AggregatedSweep, InexactSweepsStayMonotoneAndMeetTheirLimits) {
  // An oracle work bound of one call stops every oracle run at its first call: each limit falls
  // back to a 30-call random walk, whose answers alone need not be monotone.
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 4, Mode::kServe);
  SpaceOptions o;
  o.max_batch = 8;
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 4, o);
  ASSERT_TRUE(space.ok());
  AggregatedSweepOptions opt;
  opt.searcher = "rw";
  opt.budget = 30;
  opt.oracle_calls = 1;
  opt.points = 10;
  std::vector<double> limits;
  StatusOr<ParetoSeries> s = AggregatedParetoSeries(p, *space, opt, nullptr, &limits);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->sweep.size(), limits.size());  // every limit has a plan (the scan's at least)
  for (size_t i = 0; i < s->sweep.size(); ++i) {
    const ParetoPoint& pt = s->sweep[i];
    EXPECT_FALSE(pt.exact);
    EXPECT_LE(pt.tpot_ms, pt.tpot_limit_ms * (1 + 1e-9));
    if (i > 0) {
      EXPECT_GE(pt.tokens_per_s_per_gpu, s->sweep[i - 1].tokens_per_s_per_gpu);
    }
  }
  EXPECT_EQ(s->front.size(), SlowFront(s->sweep).size());
}

// The aggregated series and its replicas on several threads: the same points as on one (the
// fallback searcher's and the replicas' searches each on a searcher of their own).
TEST(AggregatedSweep, TheSameSeriesAndReplicasOnEveryThreadCount) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 4, Mode::kServe);
  SpaceOptions o;
  o.max_batch = 8;
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 4, o);
  ASSERT_TRUE(space.ok());
  auto run = [&](int jobs) {
    AggregatedSweepOptions opt;
    opt.searcher = "local";
    opt.budget = 60;
    opt.oracle_calls = 5;  // the oracle stops early: every point is the searcher's
    opt.points = 8;
    opt.jobs = jobs;
    std::vector<double> limits;
    StatusOr<ParetoSeries> s = AggregatedParetoSeries(p, *space, opt, nullptr, &limits);
    EXPECT_TRUE(s.ok());
    return WithReplicas(*s, p,
                        [&](const Problem& q) {
                          return StrategySpace::Make(q.model, q.cluster.num_gpus, o);
                        },
                        opt, nullptr);
  };
  const ParetoSeries one = run(1);
  ASSERT_FALSE(one.sweep.empty());
  int replicated = 0;
  for (const ParetoPoint& pt : one.sweep)
    replicated += pt.strategy.find("x pp=") != std::string::npos;
  EXPECT_GT(replicated, 0);  // some points are replicas of a smaller instance
  for (int jobs : {2, 8}) {
    const ParetoSeries many = run(jobs);
    ASSERT_EQ(many.sweep.size(), one.sweep.size()) << jobs;
    for (size_t i = 0; i < one.sweep.size(); ++i) {
      EXPECT_EQ(many.sweep[i].strategy, one.sweep[i].strategy) << jobs << " " << i;
      EXPECT_EQ(many.sweep[i].tokens_per_s_per_gpu, one.sweep[i].tokens_per_s_per_gpu);
      EXPECT_EQ(many.sweep[i].found_by, one.sweep[i].found_by);
    }
  }
}

TEST(AggregatedSweep, PrefillHasNoTpotAndCancelStops) {
  Problem p = testing::MakeProblem(testing::TinyDense(2), 2, Mode::kPrefill);
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 2, SpaceOptions{});
  ASSERT_TRUE(space.ok());
  std::vector<double> limits;
  EXPECT_FALSE(AggregatedParetoSeries(p, *space, {}, nullptr, &limits).ok());
  struct Cancel : Observer {
    bool Cancelled() override { return true; }
  } cancel;
  p.workload.mode = Mode::kServe;
  StatusOr<ParetoSeries> s = AggregatedParetoSeries(p, *space, {}, &cancel, &limits);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->cancelled);
}

}  // namespace
}  // namespace l2s
