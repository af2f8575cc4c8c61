// Invariants every searcher must satisfy (open_spiel style: one parameterised suite run for every
// name in SearcherNames(), for the paper's RL configuration "rl(paper=1)" next to the default
// "rl" and for a local searcher without two moves; a searcher is skipped while MakeSearcher
// returns Unsupported):
//   - the result is a structurally valid strategy that Simulator::Evaluate re-evaluates to the
//     reported value;
//   - budget-limited searchers never use more calls than the budget;
//   - same seed -> identical result and trace;
//   - the trace is strictly increasing in value, non-decreasing in call index and ends at the
//     result;
//   - an observer that cancels after N calls stops the search with the best so far
//     (interrupted = true, calls <= N + 1).
// Plus cross-checks: SA, GA and the random walk reach the oracle's optimum on a tiny problem with
// a generous budget; megatron equals the best Megatron-dims strategy by brute force; the oracle
// is >= every searcher on several problems.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "search/search.h"
#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s {
namespace {

bool BudgetLimited(const std::string& name) {
  return name != "megatron" && name != "default" && name != "oracle";
}

// One problem with its space (the space points into the simulator's copy of the model).
struct Instance {
  std::string label;
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<StrategySpace> space;
};

Instance MakeInstance(std::string label, Problem p, SpaceOptions opt) {
  Instance in;
  in.label = std::move(label);
  in.sim = std::make_unique<Simulator>(std::move(p));
  const Problem& q = in.sim->problem();
  in.space = std::make_unique<StrategySpace>(
      *StrategySpace::Make(q.model, q.cluster.num_gpus, opt));
  return in;
}

// Small problems with explicit batch options (so that every searcher sees the same space as the
// oracle): memory squeezed so that it binds for part of the space, and a serve case with SLOs.
std::vector<Instance> Problems() {
  std::vector<Instance> out;
  {
    Problem p = testing::MakeProblem(testing::TinyMoe(4), 8, Mode::kDecode);
    testing::SqueezeMemory(&p, 0.5);
    out.push_back(MakeInstance("moe-8gpu-decode", std::move(p), SpaceOptions{.max_batch = 8}));
  }
  {
    Problem p = testing::MakeProblem(testing::TinyDense(4), 4, Mode::kServe);
    testing::SqueezeMemory(&p, 0.8);
    testing::BindSlo(&p, /*ttft=*/false, 1.0);
    out.push_back(MakeInstance("dense-4gpu-serve", std::move(p), SpaceOptions{.max_batch = 8}));
  }
  {
    Problem p = testing::MakeProblem(testing::TinyMla(3, 1), 4, Mode::kPrefill);
    out.push_back(MakeInstance("mla-4gpu-prefill", std::move(p),
                               SpaceOptions{.max_batch = 4, .search_sp = false}));
  }
  return out;
}

class SearcherInvariants : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto s = MakeSearcher(GetParam());
    if (!s.ok() && s.status().code() == Status::Code::kUnsupported)
      GTEST_SKIP() << GetParam() << ": " << s.status().message();
    ASSERT_TRUE(s.ok()) << s.status().message();
    searcher_ = std::move(*s);
  }
  std::unique_ptr<Searcher> Fresh() {
    auto s = MakeSearcher(GetParam());
    return std::move(s.value());
  }
  std::unique_ptr<Searcher> searcher_;
};

constexpr int64_t kBudget = 240;

void ExpectTraceOk(const SearchResult& r) {
  if (!r.found) {
    EXPECT_TRUE(r.trace.empty());
    return;
  }
  ASSERT_FALSE(r.trace.empty());
  EXPECT_GE(r.trace.front().call, 1);
  for (size_t i = 1; i < r.trace.size(); ++i) {
    EXPECT_GT(r.trace[i].value, r.trace[i - 1].value);
    EXPECT_GE(r.trace[i].call, r.trace[i - 1].call);
  }
  EXPECT_EQ(r.trace.back().value, r.eval.tokens_per_s_per_gpu);
  EXPECT_LE(r.trace.back().call, r.calls);
}

void ExpectReevaluates(const Instance& in, const SearchResult& r) {
  ASSERT_TRUE(r.found) << in.label;
  EXPECT_TRUE(in.space->Check(r.best).ok()) << in.label << ": " << ToText(r.best);
  const Evaluation e = in.sim->Evaluate(r.best);
  ASSERT_TRUE(e.valid()) << in.label << ": " << in.sim->Reason(r.best, e);
  EXPECT_NEAR(e.tokens_per_s_per_gpu, r.eval.tokens_per_s_per_gpu,
              1e-9 * r.eval.tokens_per_s_per_gpu)
      << in.label;
}

class Counter : public Observer {
 public:
  explicit Counter(int64_t cancel_after) : cancel_after_(cancel_after) {}
  void OnProgress(int64_t calls, int64_t budget, double best) override {
    (void)budget;
    (void)best;
    last_calls = calls;
    ++progress;
  }
  bool Cancelled() override { return cancel_after_ > 0 && progress >= cancel_after_; }
  int64_t progress = 0, last_calls = 0;

 private:
  int64_t cancel_after_;
};

TEST_P(SearcherInvariants, ValidResultWithinBudgetAndMonotoneTrace) {
  for (const Instance& in : Problems()) {
    SCOPED_TRACE(in.label);
    Counter counter(0);
    const SearchResult r = searcher_->Search(*in.sim, *in.space, kBudget, 1, &counter);
    ExpectReevaluates(in, r);
    ExpectTraceOk(r);
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(counter.progress, r.calls);  // the observer sees every call
    if (BudgetLimited(GetParam())) {
      EXPECT_LE(r.calls, kBudget);
    } else {
      EXPECT_GE(r.calls, 1);
    }
  }
}

TEST_P(SearcherInvariants, TinyBudgetsAreRespected) {
  if (!BudgetLimited(GetParam())) GTEST_SKIP() << "not budget-limited";
  const std::vector<Instance> problems = Problems();
  for (int64_t budget : {1, 2, 7}) {
    const SearchResult r = searcher_->Search(*problems[0].sim, *problems[0].space, budget, 3, nullptr);
    EXPECT_LE(r.calls, budget);
    ExpectTraceOk(r);
  }
}

TEST_P(SearcherInvariants, SameSeedSameResult) {
  const std::vector<Instance> problems = Problems();
  const Instance& in = problems[0];
  const SearchResult a = searcher_->Search(*in.sim, *in.space, kBudget, 42, nullptr);
  const SearchResult b = Fresh()->Search(*in.sim, *in.space, kBudget, 42, nullptr);
  EXPECT_EQ(a.found, b.found);
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.eval.tokens_per_s_per_gpu, b.eval.tokens_per_s_per_gpu);
  EXPECT_EQ(a.calls, b.calls);
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (size_t i = 0; i < a.trace.size(); ++i) {
    EXPECT_EQ(a.trace[i].call, b.trace[i].call);
    EXPECT_EQ(a.trace[i].value, b.trace[i].value);
  }
  // The same searcher object searched twice gives the same answer too (no hidden state).
  const SearchResult c = searcher_->Search(*in.sim, *in.space, kBudget, 42, nullptr);
  EXPECT_EQ(a.best, c.best);
  EXPECT_EQ(a.calls, c.calls);
}

TEST_P(SearcherInvariants, CancellationStopsWithBestSoFar) {
  const std::vector<Instance> problems = Problems();
  const Instance& in = problems[0];
  for (int64_t n : {1, 10, 40}) {
    SCOPED_TRACE(n);
    Counter counter(n);
    const SearchResult r = searcher_->Search(*in.sim, *in.space, kBudget, 5, &counter);
    EXPECT_LE(r.calls, n + 1);
    EXPECT_EQ(r.interrupted, counter.progress >= n);
    if (r.found) {
      ExpectReevaluates(in, r);
      ExpectTraceOk(r);
    }
  }
}

// Every registered searcher plus the paper's RL and a local searcher without two moves.
std::vector<std::string> SearcherSpecs() {
  std::vector<std::string> specs = SearcherNames();
  specs.push_back("rl(paper=1)");
  specs.push_back("local(without=pair+crossover)");
  return specs;
}

// A test name from a spec: "rl(paper=1)" -> "rl_paper_1" (gtest allows letters, digits and '_').
std::string TestName(const ::testing::TestParamInfo<std::string>& i) {
  std::string out;
  for (char c : i.param) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, SearcherInvariants, ::testing::ValuesIn(SearcherSpecs()), TestName);

// ------------------------------------------------------------ cross-checks between searchers

SearchResult RunSpec(const std::string& spec, const Instance& in, int64_t budget, uint64_t seed) {
  auto s = MakeSearcher(spec);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return (*s)->Search(*in.sim, *in.space, budget, seed, nullptr);
}

TEST(SearcherCrossChecks, MetaheuristicsReachTheOptimumOfATinyProblem) {
  // 2 GPUs, dense, 2 layers, batch fixed, sp off: 3 valid degree configs x 3^7 dims = 6561
  // strategies; a budget of 4x the space lets every metaheuristic find the exact optimum.
  Problem p = testing::MakeProblem(testing::TinyDense(2), 2, Mode::kDecode);
  testing::SqueezeMemory(&p, 0.7);
  Instance in = MakeInstance(
      "tiny", std::move(p),
      SpaceOptions{.max_batch = 1, .search_batch = false, .fixed_batch = 4, .search_sp = false});
  const SearchResult oracle = RunSpec("oracle", in, 0, 0);
  ASSERT_TRUE(oracle.found);
  const int64_t budget = static_cast<int64_t>(4 * in.space->Size());
  for (const char* spec : {"sa", "ga", "rw", "local"}) {
    const SearchResult r = RunSpec(spec, in, budget, 7);
    ASSERT_TRUE(r.found) << spec;
    EXPECT_NEAR(r.eval.tokens_per_s_per_gpu, oracle.eval.tokens_per_s_per_gpu,
                1e-9 * oracle.eval.tokens_per_s_per_gpu)
        << spec << " found " << ToText(r.best) << "\noracle: " << ToText(oracle.best);
  }
}

TEST(SearcherCrossChecks, MegatronIsTheBestMegatronDimsStrategy) {
  for (const Instance& in : Problems()) {
    SCOPED_TRACE(in.label);
    Strategy want_dims;
    want_dims.dims = MegatronDims();
    ClearAbsentOps(in.sim->problem().model, &want_dims);
    // Brute force over every encoded strategy, keeping those with Megatron dims and sp off.
    bool found = false;
    double best = 0;
    Strategy best_s;
    std::vector<int> idx(in.space->num_heads(), 0);
    while (true) {
      const Strategy s = in.space->Decode(idx);
      // Megatron's family: its dims, sp off, one slot per expert, no overlap.
      if (s.dims == want_dims.dims && !s.sp && s.slots == 0 && s.overlap == Overlap::kNone) {
        const Evaluation e = in.sim->Evaluate(s);
        if (e.valid() && (!found || e.tokens_per_s_per_gpu > best)) {
          found = true;
          best = e.tokens_per_s_per_gpu;
          best_s = s;
        }
      }
      int h = in.space->num_heads() - 1;
      while (h >= 0 && ++idx[h] == in.space->head_size(h)) idx[h--] = 0;
      if (h < 0) break;
    }
    const SearchResult r = RunSpec("megatron", in, 0, 0);
    ASSERT_EQ(r.found, found);
    if (!found) continue;
    EXPECT_EQ(r.best, best_s);
    EXPECT_EQ(r.eval.tokens_per_s_per_gpu, best);
  }
}

TEST(SearcherCrossChecks, OracleIsAtLeastEverySearcher) {
  for (const Instance& in : Problems()) {
    SCOPED_TRACE(in.label);
    const SearchResult oracle = RunSpec("oracle", in, 0, 0);
    ASSERT_TRUE(oracle.found);
    for (const std::string& name : SearcherSpecs()) {
      if (name == "oracle") continue;
      auto s = MakeSearcher(name);
      if (!s.ok() && s.status().code() == Status::Code::kUnsupported) continue;
      ASSERT_TRUE(s.ok());
      const SearchResult r = (*s)->Search(*in.sim, *in.space, kBudget, 11, nullptr);
      if (!r.found) continue;
      EXPECT_LE(r.eval.tokens_per_s_per_gpu, oracle.eval.tokens_per_s_per_gpu * (1 + 1e-9))
          << name << " found " << ToText(r.best) << "\noracle: " << ToText(oracle.best);
    }
  }
}

}  // namespace
}  // namespace l2s
