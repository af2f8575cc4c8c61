// The searcher interface: spec strings (parse, errors, per-searcher option validation, canonical
// names that parse back), the budgeted Objective (call counting, best/trace bookkeeping, ties,
// observer hooks and cancellation) and the masked sampling helpers the baselines share.
#include "search/search.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "search/sampling.h"
#include "search/test_util.h"
#include "strategy/space.h"
#include "strategy/test_strategies.h"

namespace l2s {
namespace {

using testing::MegatronStrategy;

TEST(SearcherSpec, ParsesNameAndOptions) {
  auto s = ParseSearcherSpec("sa(t0=100, steps=5)");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "sa");
  ASSERT_EQ(s->args.size(), 2u);
  EXPECT_EQ(s->args.at("t0"), "100");
  EXPECT_EQ(s->args.at("steps"), "5");
  EXPECT_EQ(s->text, "sa(t0=100, steps=5)");
  EXPECT_DOUBLE_EQ(s->Double("t0", 1), 100);
  EXPECT_EQ(s->Int("steps", 1), 5);
  EXPECT_EQ(s->Int("missing", 7), 7);
  EXPECT_TRUE(s->error.empty());

  auto plain = ParseSearcherSpec("  random ");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->name, "random");
  EXPECT_TRUE(plain->args.empty());
  auto empty_args = ParseSearcherSpec("ga()");
  ASSERT_TRUE(empty_args.ok());
  EXPECT_EQ(empty_args->name, "ga");
  EXPECT_TRUE(empty_args->args.empty());
}

TEST(SearcherSpec, MalformedSpecsAreOneLineErrors) {
  for (const char* bad : {"", "   ", "sa(", "sa(t0)", "sa(t0=)", "sa(t0=1,t0=2)", "sa(t0=1)x",
                          "s a", "sa(,)", "sa(t0=1,)", "(t0=1)", "sa(t0=(1))", "sa)t0=1("}) {
    auto s = ParseSearcherSpec(bad);
    EXPECT_FALSE(s.ok()) << "'" << bad << "' parsed";
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument) << bad;
      EXPECT_EQ(s.status().message().find('\n'), std::string::npos) << s.status().message();
      EXPECT_FALSE(s.status().message().empty());
    }
  }
}

TEST(SearcherSpec, TypedAccessorsRecordBadValues) {
  auto s = ParseSearcherSpec("x(a=abc,b=1.5,c=maybe,d=1e400)");
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->Double("a", 2.0), 2.0);
  EXPECT_NE(s->error.find("a=abc"), std::string::npos) << s->error;
  s->error.clear();
  EXPECT_EQ(s->Int("b", 3), 3);  // 1.5 is not an integer
  EXPECT_NE(s->error.find("b=1.5"), std::string::npos) << s->error;
  s->error.clear();
  EXPECT_TRUE(s->Bool("c", true));
  EXPECT_NE(s->error.find("c=maybe"), std::string::npos) << s->error;
  s->error.clear();
  EXPECT_DOUBLE_EQ(s->Double("d", 4.0), 4.0);  // overflows
  EXPECT_FALSE(s->error.empty());
}

TEST(MakeSearcher, UnknownNamesAndOptionsAreErrorsNamingThem) {
  auto unknown = MakeSearcher("annealing");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("annealing"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("oracle"), std::string::npos);  // lists the names

  struct Bad {
    const char* spec;
    const char* mentions;
  };
  for (const Bad& b : {Bad{"rl(lr=1e-3, steps=5)", "steps"}, Bad{"rl(lr=abc)", "lr"},
                       Bad{"rl(lr=-1)", "lr"}, Bad{"local(patience=0)", "patience"},
                       Bad{"sa(t0=100)", "t0"}, Bad{"ga(pop=64)", "pop"},
                       Bad{"rw(x=1)", "x"},
                       Bad{"megatron(sp=on)", "sp"}, Bad{"default(tp=8)", "tp"},
                       Bad{"oracle(fast=1)", "fast"}}) {
    auto s = MakeSearcher(b.spec);
    ASSERT_FALSE(s.ok()) << b.spec;
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument) << b.spec;
    EXPECT_NE(s.status().message().find(b.mentions), std::string::npos)
        << b.spec << ": " << s.status().message();
  }
}

TEST(MakeSearcher, EveryNameWorksAndCanonicalNamesParseBack) {
  for (const std::string& n : SearcherNames()) {
    auto s = MakeSearcher(n);
    if (n == "rl" && !s.ok() && s.status().code() == Status::Code::kUnsupported) continue;
    ASSERT_TRUE(s.ok()) << n << ": " << s.status().message();
    const std::string canon = (*s)->name();
    EXPECT_EQ(canon.substr(0, n.size()), n);
    auto again = MakeSearcher(canon);
    ASSERT_TRUE(again.ok()) << canon << ": " << again.status().message();
    EXPECT_EQ((*again)->name(), canon);
  }
  auto rl = MakeSearcher("rl(refine=0.25)");
  ASSERT_TRUE(rl.ok());
  EXPECT_NE((*rl)->name().find("refine=0.25"), std::string::npos) << (*rl)->name();
  auto sa = MakeSearcher("sa");
  ASSERT_TRUE(sa.ok());
  EXPECT_EQ((*sa)->name(), "sa");
}

// Records what the objective reports; cancels after `cancel_after` calls (0 = never).
class Recorder : public Observer {
 public:
  explicit Recorder(int64_t cancel_after = 0) : cancel_after_(cancel_after) {}
  void OnProgress(int64_t calls, int64_t budget, double best) override {
    progress.push_back(calls);
    budgets.insert(budget);
    bests.push_back(best);
  }
  void OnEvaluation(const Strategy& s, const Evaluation& e) override {
    (void)s;
    evaluations.push_back(e.tokens_per_s_per_gpu);
  }
  bool Cancelled() override { return cancel_after_ > 0 && static_cast<int64_t>(progress.size()) >= cancel_after_; }

  std::vector<int64_t> progress;
  std::set<int64_t> budgets;
  std::vector<double> bests, evaluations;

 private:
  int64_t cancel_after_;
};

struct Fixture {
  Problem problem = testing::MakeProblem(testing::TinyDense(2), 2, Mode::kDecode);
  Simulator sim{problem};
  StrategySpace space = *StrategySpace::Make(problem.model, 2, SpaceOptions{.max_batch = 4});
};

TEST(Objective, CountsCallsKeepsBestAndTrace) {
  Fixture f;
  Recorder rec;
  Objective obj(f.sim, f.space, 5, &rec);
  Strategy a = MegatronStrategy(1, 2, 1, 1, 1), b = MegatronStrategy(1, 2, 1, 1, 4),
           bad = MegatronStrategy(1, 3, 1, 1, 1);
  ClearAbsentOps(f.problem.model, &a);
  ClearAbsentOps(f.problem.model, &b);
  const double va = Objective::Value(f.sim.Evaluate(a));
  const double vb = Objective::Value(f.sim.Evaluate(b));
  ASSERT_GT(va, 0);
  ASSERT_GT(vb, va);  // batch 4 amortises the weight reads better than batch 1
  EXPECT_EQ(Objective::Value(obj.Evaluate(bad)), 0.0);  // tp=3 on 2 GPUs: structure
  EXPECT_FALSE(obj.has_best());
  obj.Evaluate(a);
  obj.Evaluate(b);
  obj.Evaluate(a);
  Strategy b2 = b;  // same value as b: a tie keeps the earlier one
  obj.Evaluate(b2);
  EXPECT_TRUE(obj.Done());
  EXPECT_FALSE(obj.cancelled());
  const SearchResult r = obj.Finish("test");
  EXPECT_EQ(r.calls, 5);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.best, b);
  EXPECT_DOUBLE_EQ(r.eval.tokens_per_s_per_gpu, vb);
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].call, 2);
  EXPECT_DOUBLE_EQ(r.trace[0].value, va);
  EXPECT_EQ(r.trace[1].call, 3);
  EXPECT_DOUBLE_EQ(r.trace[1].value, vb);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(rec.progress, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(rec.budgets, (std::set<int64_t>{5}));
  EXPECT_EQ(rec.bests, (std::vector<double>{0, va, vb, vb, vb}));
  EXPECT_EQ(rec.evaluations.size(), 5u);
}

TEST(Objective, ObserverCancels) {
  Fixture f;
  Recorder rec(2);
  Objective obj(f.sim, f.space, 100, &rec);
  Strategy a = MegatronStrategy(1, 2, 1, 1, 1);
  ClearAbsentOps(f.problem.model, &a);
  obj.Evaluate(a);
  EXPECT_FALSE(obj.Done());
  obj.Evaluate(a);
  EXPECT_TRUE(obj.Done());
  EXPECT_TRUE(obj.cancelled());
  EXPECT_TRUE(obj.Finish("x").interrupted);
}

TEST(Objective, EncodedEvaluationDecodes) {
  Fixture f;
  Objective obj(f.sim, f.space, 2, nullptr);
  Strategy a = MegatronStrategy(1, 2, 1, 1, 2);
  ClearAbsentOps(f.problem.model, &a);
  std::vector<int> idx;
  ASSERT_TRUE(f.space.Encode(a, &idx));
  const double v = Objective::Value(obj.EvaluateEncoded(idx));
  EXPECT_DOUBLE_EQ(v, Objective::Value(f.sim.Evaluate(a)));
  EXPECT_EQ(obj.best(), a);
}

TEST(Rng, UniformIsUnbiasedAndDeterministic) {
  Rng a(7), b(7);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const int x = a.Uniform(6);
    ASSERT_EQ(x, b.Uniform(6));
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 6);
    ++counts[x];
  }
  // Each count is Binomial(60000, 1/6): mean 10000, sd 91; 6 sd = 547.
  for (int c : counts) EXPECT_NEAR(c, 10000, 547);
  for (int i = 0; i < 1000; ++i) {
    const double u = a.Unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(MaskedSampler, SamplesAndMovesStayValid) {
  const ModelSpec models[] = {testing::TinyDense(4), testing::TinyMoe(4), testing::TinyMla(3, 1)};
  Rng rng(11);
  for (const ModelSpec& m : models) {
    for (int gpus : {1, 6, 12, 16}) {
      auto space = StrategySpace::Make(m, gpus, SpaceOptions{.max_batch = 8});
      ASSERT_TRUE(space.ok());
      MaskedSampler ms(*space);
      std::vector<int> idx, moved;
      std::set<std::vector<int>> seen;
      for (int i = 0; i < 200; ++i) {
        ms.Sample(rng, &idx);
        ASSERT_TRUE(space->Check(space->Decode(idx)).ok()) << ToText(space->Decode(idx));
        seen.insert(idx);
        moved = idx;
        ASSERT_TRUE(ms.MoveOne(rng, &moved));
        ASSERT_TRUE(space->Check(space->Decode(moved)).ok()) << ToText(space->Decode(moved));
        // The first changed head h; later heads change only if their option became invalid.
        int h = 0;
        while (h < space->num_heads() && moved[h] == idx[h]) ++h;
        ASSERT_LT(h, space->num_heads()) << "a move must change something";
        for (int j = h + 1; j < space->num_heads(); ++j) {
          std::vector<int> probe(moved.begin(), moved.begin() + j);
          probe.push_back(idx[j]);
          if (ms.Valid(probe, j)) {
            EXPECT_EQ(moved[j], idx[j]) << "head " << j << " changed needlessly";
          }
        }
        std::vector<int> mutated = idx;
        ms.Mutate(rng, 0.3, &mutated);
        ASSERT_TRUE(space->Check(space->Decode(mutated)).ok());
      }
      EXPECT_GT(seen.size(), 150u);  // 200 draws from >= 10^3 points: few repeats
    }
  }
}

TEST(MaskedSampler, RepairFixesArbitraryVectors) {
  const ModelSpec model = testing::TinyMoe(4);  // the space points to it
  auto space = StrategySpace::Make(model, 16, SpaceOptions{.max_batch = 4});
  ASSERT_TRUE(space.ok());
  MaskedSampler ms(*space);
  Rng rng(5);
  std::mt19937_64 gen(9);
  for (int i = 0; i < 300; ++i) {
    std::vector<int> idx(space->num_heads());
    for (int h = 0; h < space->num_heads(); ++h) idx[h] = static_cast<int>(gen() % space->head_size(h));
    const std::vector<int> before = idx;
    ms.Repair(rng, &idx);
    EXPECT_TRUE(space->Check(space->Decode(idx)).ok())
        << ToText(space->Decode(idx)) << ": " << space->Check(space->Decode(idx)).message();
    if (space->Check(space->Decode(before)).ok()) {
      EXPECT_EQ(idx, before);  // a valid vector is left alone
    }
  }
}

}  // namespace
}  // namespace l2s
