// The planning library: the oracle's work bound, the aggregated plan's contract (never below a
// figure it reports, deterministic per seed) and the disaggregated plan's work bound.
#include <gtest/gtest.h>

#include "model/counts.h"
#include "model/presets.h"
#include "plan/aggregated.h"
#include "plan/disaggregated.h"
#include "plan/space.h"
#include "search/oracle.h"
#include "search/test_util.h"
#include "plan/work_bound.h"

namespace l2s {
namespace {

// Reports `calls` as a solver does: counts restart at 1 with each new solve.
class CountingObserver : public Observer {
 public:
  bool Cancelled() override { return ++polls > stop_after && stop_after > 0; }
  int polls = 0;
  int stop_after = 0;
};

TEST(WorkBound, CountsCallsAcrossSolvesWhoseCountsRestart) {
  WorkBoundObserver w(nullptr, 10);
  // First solve: calls 1..4 (4 calls); second solve restarts: 1..3 (3 more); third: 1..3.
  for (int c = 1; c <= 4; ++c) {
    w.OnProgress(c, 0, 0);
    EXPECT_FALSE(w.Cancelled());
  }
  for (int c = 1; c <= 3; ++c) {
    w.OnProgress(c, 0, 0);
    EXPECT_FALSE(w.Cancelled());
  }
  EXPECT_EQ(w.calls(), 7);
  w.OnProgress(1, 0, 0);
  w.OnProgress(2, 0, 0);
  EXPECT_FALSE(w.Cancelled());  // 9 calls
  w.OnProgress(3, 0, 0);        // the 10th call reaches the bound: allowed
  EXPECT_FALSE(w.Cancelled());
  w.OnProgress(1, 0, 0);        // the 11th is past it
  EXPECT_TRUE(w.Cancelled());
  EXPECT_TRUE(w.bound_hit());
  EXPECT_FALSE(w.inner_cancelled());
}

TEST(WorkBound, ForwardsTheCallersCancellationAndZeroMeansNoBound) {
  CountingObserver inner;
  inner.stop_after = 2;
  WorkBoundObserver w(&inner, 0);
  for (int c = 1; c <= 1000; ++c) w.OnProgress(c, 0, 0);
  EXPECT_FALSE(w.Cancelled());
  EXPECT_FALSE(w.Cancelled());
  EXPECT_TRUE(w.Cancelled());  // the caller's third poll says stop
  EXPECT_TRUE(w.inner_cancelled());
  EXPECT_FALSE(w.bound_hit());
}

struct Small {
  Simulator sim;
  StrategySpace space;
};
Small SmallServe() {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 200;
  Simulator sim(p);
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 8, plan::PlanSpaceOptions(p));
  EXPECT_TRUE(space.ok());
  return {std::move(sim), std::move(*space)};
}

TEST(PlanAggregated, NeverBelowAnyRunItReportsAndDeterministicPerSeed) {
  const Small s = SmallServe();
  plan::AggRequest req;
  req.search = "rw";
  req.budget = 60;
  req.seed = 3;
  StatusOr<plan::AggPlan> a = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a->have_recommended);
  EXPECT_EQ(a->oracle_status, "solved");
  for (const char* by : plan::kRunSources) {
    const plan::Run* r = plan::RunOf(*a, by);
    ASSERT_NE(r, nullptr);
    if (r->ran && r->result.found) {
      EXPECT_GE(a->recommended_eval.tokens_per_s_per_gpu, plan::Value(*r) * (1 - 1e-12)) << by;
    }
  }
  // The plan's figures are those of its strategy evaluated again.
  const Evaluation again = s.sim.Evaluate(a->recommended);
  EXPECT_NEAR(again.tokens_per_s_per_gpu, a->recommended_eval.tokens_per_s_per_gpu,
              1e-9 * again.tokens_per_s_per_gpu);
  StatusOr<plan::AggPlan> b = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(ToText(a->recommended), ToText(b->recommended));
  EXPECT_EQ(a->recommended_eval.tokens_per_s_per_gpu, b->recommended_eval.tokens_per_s_per_gpu);
}

TEST(PlanAggregated, TheOracleBoundCountsItsCalls) {
  const Small s = SmallServe();
  const SearchResult full = SolveExact(s.sim, s.space, nullptr);
  ASSERT_TRUE(full.found);
  ASSERT_GT(full.calls, 2);
  plan::AggRequest req;
  req.search = "rw";
  req.budget = 20;
  // One call short of the oracle's own count: it stops at its last call, "skipped", bound hit.
  req.oracle_calls = full.calls - 1;
  StatusOr<plan::AggPlan> cut = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->oracle_status, "skipped");
  EXPECT_TRUE(cut->oracle.bound_hit);
  EXPECT_EQ(cut->oracle.result.calls, full.calls);
  // Its own count: it finishes, with the optimum.
  req.oracle_calls = full.calls;
  StatusOr<plan::AggPlan> done = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->oracle_status, "solved");
  EXPECT_FALSE(done->oracle.bound_hit);
  EXPECT_EQ(plan::Value(done->oracle), full.eval.tokens_per_s_per_gpu);
  // 0: no oracle.
  req.oracle_calls = 0;
  StatusOr<plan::AggPlan> none = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->oracle_status, "not run");
  EXPECT_FALSE(none->oracle.ran);
}

TEST(PlanAggregated, BadRequestsAreOneLineErrors) {
  const Small s = SmallServe();
  plan::AggRequest req;
  req.search = "nosuch";
  StatusOr<plan::AggPlan> a = plan::PlanAggregated(s.sim, s.space, req);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("--search"), std::string::npos);
  req.search = "rw";
  req.budget = 0;
  EXPECT_FALSE(plan::PlanAggregated(s.sim, s.space, req).ok());
  req.budget = 10;
  req.oracle_calls = -1;
  EXPECT_FALSE(plan::PlanAggregated(s.sim, s.space, req).ok());
}

TEST(PlanAggregated, NothingValidIsAResultThatSaysWhy) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  p.workload.tpot_ms = 1e-6;  // no strategy decodes a token in a nanosecond
  Simulator sim(p);
  StatusOr<StrategySpace> space = StrategySpace::Make(p.model, 8, plan::PlanSpaceOptions(p));
  ASSERT_TRUE(space.ok());
  plan::AggRequest req;
  req.search = "rw";
  req.budget = 30;
  StatusOr<plan::AggPlan> a = plan::PlanAggregated(sim, *space, req);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->have_recommended);
  EXPECT_NE(a->failures.Reason(p).find("TPOT SLO"), std::string::npos) << a->failures.Reason(p);
}

// The reason names the limit that binds: TPOT misses alone, TTFT misses alone, or both kinds
// (the simulator checks TPOT first, so a TTFT miss met the TPOT SLO: the pair binds, and the
// nearest miss is the fastest first token among those within the TPOT SLO).
TEST(PlanAggregated, FailureReasonNamesTheBindingLimits) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  p.workload.ttft_ms = 1;
  p.workload.tpot_ms = 20;
  Strategy s;
  auto miss = [](Verdict v, double ttft_s, double tpot_s) {
    Evaluation e;
    e.verdict = v;
    e.ttft_s = ttft_s;
    e.tpot_s = tpot_s;
    e.batch = 8;
    return e;
  };
  auto starts = [&](const plan::FailureStats& f, const std::string& prefix) {
    EXPECT_EQ(f.Reason(p).rfind(prefix, 0), 0u) << f.Reason(p);
  };
  plan::FailureStats tpot_only;
  tpot_only.Add(s, miss(Verdict::kTpot, 0.0005, 0.0201));
  tpot_only.Add(s, miss(Verdict::kTpot, 0.0005, 0.0250));
  starts(tpot_only, "no strategy meets the TPOT SLO of 20 ms: the fastest that fits in memory "
                    "takes 20.100 ms per token");
  plan::FailureStats both = tpot_only;
  both.Add(s, miss(Verdict::kTtft, 0.0355, 0.0199));
  both.Add(s, miss(Verdict::kTtft, 0.0400, 0.0150));
  starts(both, "no strategy meets both the TTFT SLO of 1 ms and the TPOT SLO of 20 ms: of those "
               "within the TPOT SLO, the fastest to the first token takes 35.5 ms");
  plan::FailureStats ttft_only;
  ttft_only.Add(s, miss(Verdict::kTtft, 0.0400, 0.0150));
  starts(ttft_only, "no strategy meets the TTFT SLO of 1 ms: the fastest that fits in memory "
                    "takes 40.0 ms");
}

// Nothing fits: the reason adds how many GPUs the weights alone need, and with FP8 weights where
// the GPU has FP8. Llama-3.1-405B in BF16, 811.6 GB (FP8: 413.6 GB with its embeddings and LM
// head in BF16) over 80 GiB less a 3.9 GiB reserve = 81.7 GB per GPU: 9.93 -> 10 (FP8 5.06 -> 6).
TEST(PlanAggregated, NothingFitsSaysHowManyGpusTheWeightsNeed) {
  const ModelSpec m = *ModelPreset("llama-3.1-405b");
  Problem p = testing::MakeProblem(m, 4, Mode::kDecode);
  Evaluation e;
  e.verdict = Verdict::kMemory;
  e.mem_capacity_bytes = 80.0 * (1ull << 30);
  e.reserve_bytes = 3.9 * (1ull << 30);
  e.mem_bytes = 200.0 * (1ull << 30);
  e.weight_bytes = 189.0 * (1ull << 30);
  plan::FailureStats f;
  f.Add(Strategy{}, e);
  EXPECT_NE(f.Reason(p).find("; its weights alone need at least 10 x h100 (6 with --dtype fp8)"),
            std::string::npos)
      << f.Reason(p);
  p.cluster = *MakeCluster("a100", 8);  // no FP8 tensor cores: no FP8 count
  EXPECT_NE(f.Reason(p).find("; its weights alone need at least 10 x a100"), std::string::npos)
      << f.Reason(p);
  EXPECT_EQ(f.Reason(p).find("fp8"), std::string::npos) << f.Reason(p);
  p.cluster = *MakeCluster("h100", 16);  // the weights fit 16 GPUs: the KV cache overflows
  EXPECT_EQ(f.Reason(p).find("weights alone"), std::string::npos) << f.Reason(p);
  EXPECT_EQ(f.Reason(p).find("Grace"), std::string::npos) << f.Reason(p);
  // A Grace-Blackwell GPU: the CPU-memory offload its engines offer is named as not modelled
  // (80 GiB as above, the GPU's own capacity does not enter the count).
  p.cluster = *MakeCluster("gb200", 4);
  EXPECT_NE(f.Reason(p).find("; its weights alone need at least 10 x gb200 (6 with --dtype fp8); "
                             "weights offloaded to the Grace CPU's memory (--cpu-offload-gb, "
                             "streamed over NVLink-C2C) are not modelled: l2s keeps every weight "
                             "in HBM"),
            std::string::npos)
      << f.Reason(p);
}

// A 40-call random walk beside the joint oracle with a bound it never reaches.
plan::DisaggPlanRequest RwWithExactOracle() {
  plan::DisaggPlanRequest req;
  req.search = "rw";
  req.budget = 40;
  req.oracle_calls = int64_t{1} << 40;
  return req;
}

TEST(PlanDisaggregated, TheOracleBoundCountsWorkAcrossPoolSolves) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 200;
  plan::DisaggPlanRequest req = RwWithExactOracle();
  StatusOr<plan::DisaggPlan> full = plan::PlanDisaggregated(p, req);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->oracle_status, "solved");
  EXPECT_FALSE(full->oracle_bound_hit);
  req.oracle_calls = 1;
  StatusOr<plan::DisaggPlan> cut = plan::PlanDisaggregated(p, req);
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_EQ(cut->oracle_status, "skipped");
  EXPECT_TRUE(cut->oracle_bound_hit);
  // Deterministic: the same bound gives the same plan.
  StatusOr<plan::DisaggPlan> again = plan::PlanDisaggregated(p, req);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(cut->found, again->found);
  if (cut->found) {
    EXPECT_EQ(cut->eval.tokens_per_s_per_gpu, again->eval.tokens_per_s_per_gpu);
  }
}

// Speculation is both roles' (a speculating deployment's prefill servers run the draft's
// extend): with the depth searched, the plan is the better of the two joint spaces (each planned
// exactly here), its prefill strategy carries the decode role's depth, and its prefill figures
// are the prefill simulator's at that depth, above the non-speculating price of the same layout.
TEST(PlanDisaggregated, SpeculationIsBothRolesAndBothSettingsArePlanned) {
  ModelSpec m = testing::TinyMoe(2);
  m.mtp_layers = 1;
  Problem p = testing::MakeProblem(m, 8, Mode::kServe);
  p.workload.isl = 512;
  p.workload.osl = 128;
  p.workload.ttft_ms = 4000;
  p.workload.tpot_ms = 400;
  const plan::DisaggPlanRequest req = RwWithExactOracle();  // each joint space solved exactly
  StatusOr<plan::DisaggPlan> open = plan::PlanDisaggregated(p, req);
  ASSERT_TRUE(open.ok()) << open.status().message();
  ASSERT_TRUE(open->found);
  double fixed[2] = {0, 0};
  for (int spec : {0, 1}) {
    plan::DisaggPlanRequest q = req;
    q.speculation = spec;
    StatusOr<plan::DisaggPlan> d = plan::PlanDisaggregated(p, q);
    ASSERT_TRUE(d.ok()) << d.status().message();
    ASSERT_TRUE(d->found);
    EXPECT_EQ(d->speculation, spec);
    EXPECT_EQ(d->oracle_status, "solved");
    EXPECT_EQ(d->best.decode.mtp > 0, spec == 1);
    EXPECT_EQ(d->best.prefill.mtp, d->best.decode.mtp);  // as launched
    EXPECT_EQ(d->eval.prefill.strategy.mtp, d->best.decode.mtp);
    EXPECT_EQ(d->other_speculation_calls, 0);
    fixed[spec] = d->eval.tokens_per_s_per_gpu;
    // The prompt's KV that crosses: the model's, and the draft's when speculating.
    EXPECT_DOUBLE_EQ(d->eval.kv_bytes_per_prompt,
                     KvBytesForSequence(m, p.workload.kv, p.workload.isl) +
                         (spec == 1 ? DraftKvBytesForSequence(m, p.workload.kv, p.workload.isl) : 0.0));
    // The prefill role's figures are its simulator's at the plan's strategy.
    const DisaggModel& dm = *d->models[d->best.model];
    const Evaluation e = dm.PrefillSim(d->best.gp).Evaluate(d->best.prefill);
    EXPECT_DOUBLE_EQ(e.ttft_s, d->eval.prefill.eval.ttft_s);
    if (spec == 1) {
      Strategy plain = d->best.prefill;
      plain.mtp = 0;
      const Evaluation e0 = dm.PrefillSim(d->best.gp).Evaluate(plain);
      EXPECT_GT(e.ttft_s, e0.ttft_s);
      EXPECT_GT(e.weight_bytes, e0.weight_bytes);
    }
  }
  EXPECT_DOUBLE_EQ(open->eval.tokens_per_s_per_gpu, std::max(fixed[0], fixed[1]));
  EXPECT_EQ(open->best.prefill.mtp, open->best.decode.mtp);
  EXPECT_EQ(open->other_speculation_calls, 40);
  EXPECT_EQ(open->search.calls, 80);
  EXPECT_EQ(open->oracle_status, "solved");  // both joint spaces were
  plan::DisaggPlanRequest cut = req;
  cut.oracle_calls = 1;
  StatusOr<plan::DisaggPlan> bounded = plan::PlanDisaggregated(p, cut);
  ASSERT_TRUE(bounded.ok()) << bounded.status().message();
  EXPECT_EQ(bounded->oracle_status, "skipped");
  EXPECT_TRUE(bounded->oracle_bound_hit);
  // A model that cannot speculate has one joint space.
  Problem dense = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  dense.workload = p.workload;
  StatusOr<plan::DisaggPlan> one = plan::PlanDisaggregated(dense, req);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->speculation, -1);
  EXPECT_EQ(one->other_speculation_calls, 0);
}

// A named engine's joint space is answered as its aggregated plan is (the portfolio): the joint
// oracle first, within its bound; where it finishes its optimum is the search (its simulator
// calls counted, found by "oracle") and the searcher does not run; where it does not, the
// searcher runs and the oracle is "skipped". The unrestricted space runs the searcher beside the
// oracle (a comparison), found by the search when they tie.
TEST(PlanDisaggregated, ANamedEnginesJointSpaceIsAnsweredByTheOracleFirst) {
  Problem p = testing::MakeProblem(testing::TinyMoe(2), 8, Mode::kServe);
  p.workload.ttft_ms = 2000;
  p.workload.tpot_ms = 200;
  plan::DisaggPlanRequest req = RwWithExactOracle();
  req.engine = engine::EngineId::kSglang;
  StatusOr<plan::DisaggPlan> first = plan::PlanDisaggregated(p, req);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->found);
  EXPECT_EQ(first->searcher_spec, "oracle");
  EXPECT_EQ(first->search.searcher, "oracle");  // rw did not run
  EXPECT_EQ(first->found_by, "oracle");
  EXPECT_EQ(first->oracle_status, "solved");
  EXPECT_GT(first->search.calls, 40);  // the oracle's calls, not the rw budget's
  EXPECT_EQ(first->search_eval.tokens_per_s_per_gpu, first->oracle.eval.tokens_per_s_per_gpu);
  // --search oracle counts its calls the same way.
  plan::DisaggPlanRequest exact = req;
  exact.search = "oracle";
  StatusOr<plan::DisaggPlan> named = plan::PlanDisaggregated(p, exact);
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->search.calls, first->search.calls);
  EXPECT_EQ(named->eval.tokens_per_s_per_gpu, first->eval.tokens_per_s_per_gpu);
  // Beyond the bound: the searcher answers.
  plan::DisaggPlanRequest cut = req;
  cut.oracle_calls = 1;
  StatusOr<plan::DisaggPlan> searched = plan::PlanDisaggregated(p, cut);
  ASSERT_TRUE(searched.ok()) << searched.status().message();
  EXPECT_EQ(searched->searcher_spec, "rw");
  EXPECT_EQ(searched->oracle_status, "skipped");
  EXPECT_TRUE(searched->oracle_bound_hit);
  EXPECT_EQ(searched->search.calls, 40);
  // The unrestricted space: the searcher, and the oracle beside it.
  plan::DisaggPlanRequest ideal = RwWithExactOracle();
  StatusOr<plan::DisaggPlan> both = plan::PlanDisaggregated(p, ideal);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->searcher_spec, "rw");
  EXPECT_EQ(both->search.calls, 40);
  EXPECT_EQ(both->oracle_status, "solved");
}

}  // namespace
}  // namespace l2s
