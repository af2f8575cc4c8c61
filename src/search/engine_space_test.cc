// Searchers on engine-restricted spaces (src/engine/restrict.h), in the style of
// searcher_invariants_test: every searcher (local, rl and the paper's rl, sa, rw, ga, megatron,
// default, oracle) returns a strategy the engine launches (no Violations, in the restricted
// space) that re-evaluates to the reported value; the oracle's optimum over a restricted space
// equals brute force over that space; a point outside is charged but never simulated nor
// returned.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/restrict.h"
#include "search/oracle.h"
#include "search/search.h"
#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s {
namespace {

using engine::Capabilities;
using engine::CapabilitiesOf;
using engine::EngineId;

struct Instance {
  std::string label;
  std::unique_ptr<Simulator> sim;
  SpaceOptions opt;
};

Instance MakeInstance(std::string label, Problem p, SpaceOptions opt) {
  Instance in;
  in.label = std::move(label);
  in.sim = std::make_unique<Simulator>(std::move(p));
  in.opt = opt;
  return in;
}

// MoE without dense FFN layers (8 experts), DeepSeek-like MoE with a dense FFN layer, a shared
// expert and memory squeezed, and a dense model in serve mode with an SLO.
std::vector<Instance> Problems() {
  std::vector<Instance> out;
  {
    Problem p = testing::MakeProblem(testing::TinyMoe(4), 8, Mode::kDecode);
    testing::SqueezeMemory(&p, 0.5);
    out.push_back(MakeInstance("moe-8gpu-decode", std::move(p), SpaceOptions{.max_batch = 8}));
  }
  {
    Problem p = testing::MakeProblem(testing::TinyMla(3, 1), 8, Mode::kDecode);
    testing::SqueezeMemory(&p, 0.6);
    out.push_back(MakeInstance("mla-8gpu-decode", std::move(p), SpaceOptions{.max_batch = 8}));
  }
  {
    Problem p = testing::MakeProblem(testing::TinyDense(4), 4, Mode::kServe);
    testing::SqueezeMemory(&p, 0.8);
    testing::BindSlo(&p, /*ttft=*/false, 1.0);
    out.push_back(MakeInstance("dense-4gpu-serve", std::move(p), SpaceOptions{.max_batch = 8}));
  }
  return out;
}

constexpr EngineId kEngines[] = {EngineId::kVllm, EngineId::kSglang, EngineId::kTrtllm,
                                 EngineId::kDynamoSglang, EngineId::kMegatron};

StrategySpace Restricted(const Capabilities& c, const Instance& in) {
  StatusOr<StrategySpace> sp =
      engine::RestrictedSpace(c, in.sim->problem().model, in.sim->problem().cluster.num_gpus, in.opt);
  EXPECT_TRUE(sp.ok()) << sp.status().message();
  return std::move(sp.value());
}

class RestrictedSearch : public ::testing::TestWithParam<std::string> {};

TEST_P(RestrictedSearch, ReturnsALaunchableStrategy) {
  StatusOr<std::unique_ptr<Searcher>> made = MakeSearcher(GetParam());
  if (!made.ok() && made.status().code() == Status::Code::kUnsupported)
    GTEST_SKIP() << made.status().message();
  ASSERT_TRUE(made.ok()) << made.status().message();
  for (const Instance& in : Problems()) {
    const ModelSpec& m = in.sim->problem().model;
    for (EngineId id : kEngines) {
      const Capabilities& c = CapabilitiesOf(id);
      SCOPED_TRACE(in.label + " " + std::string(c.name));
      const StrategySpace space = Restricted(c, in);
      // The oracle's optimum over the restricted space: every searcher that finds something
      // is at most that, and a valid strategy exists when the oracle finds one.
      const SearchResult best = SolveExact(*in.sim, space, nullptr);
      const SearchResult r = (*made)->Search(*in.sim, space, 240, 1, nullptr);
      if (!r.found) {
        // Budget-free heuristics (default: one degree choice) may find nothing valid.
        EXPECT_TRUE(GetParam() == "default" || !best.found) << GetParam();
        continue;
      }
      ASSERT_TRUE(best.found);
      EXPECT_TRUE(engine::Launchable(c, m, r.best))
          << ToText(r.best) << ": " << engine::Violations(c, m, r.best).front();
      EXPECT_TRUE(space.Check(r.best).ok()) << ToText(r.best) << ": "
                                             << space.Check(r.best).message();
      const Evaluation e = in.sim->Evaluate(r.best);
      ASSERT_TRUE(e.valid()) << ToText(r.best);
      EXPECT_NEAR(e.tokens_per_s_per_gpu, r.eval.tokens_per_s_per_gpu,
                  1e-9 * r.eval.tokens_per_s_per_gpu);
      EXPECT_LE(r.eval.tokens_per_s_per_gpu, best.eval.tokens_per_s_per_gpu * (1 + 1e-9));
    }
  }
}

std::vector<std::string> Specs() {
  std::vector<std::string> specs = SearcherNames();
  specs.push_back("rl(paper=1)");
  return specs;
}

std::string ParamName(const ::testing::TestParamInfo<std::string>& info) {
  std::string out;
  for (char ch : info.param) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllSearchers, RestrictedSearch, ::testing::ValuesIn(Specs()), ParamName);

// Brute force: every valid point of the restricted space evaluated; the oracle equals the best.
TEST(RestrictedOracle, EqualsBruteForceOverTheRestrictedSpace) {
  for (const Instance& in : Problems()) {
    for (EngineId id : kEngines) {
      const Capabilities& c = CapabilitiesOf(id);
      SCOPED_TRACE(in.label + " " + std::string(c.name));
      const StrategySpace space = Restricted(c, in);
      double brute = 0;
      std::vector<int> idx(space.num_heads(), 0);
      while (true) {
        if (space.Valid(idx)) {
          const Evaluation e = in.sim->Evaluate(space.Decode(idx));
          if (e.valid()) brute = std::max(brute, e.tokens_per_s_per_gpu);
        }
        int h = space.num_heads() - 1;
        while (h >= 0 && ++idx[h] == space.head_size(h)) idx[h--] = 0;
        if (h < 0) break;
      }
      const SearchResult r = SolveExact(*in.sim, space, nullptr);
      ASSERT_EQ(r.found, brute > 0);
      if (r.found) {
        EXPECT_NEAR(r.eval.tokens_per_s_per_gpu, brute, 1e-9 * brute);
        EXPECT_TRUE(engine::Launchable(c, in.sim->problem().model, r.best)) << ToText(r.best);
      }
    }
  }
}

// A point the engine cannot launch: one call charged, no simulation, never the best.
TEST(RestrictedObjective, PointOutsideIsChargedNotSimulatedNeverBest) {
  const std::vector<Instance> problems = Problems();
  const Instance& in = problems[0];  // TinyMoe on 8 GPUs
  const Capabilities& c = CapabilitiesOf(EngineId::kVllm);
  const StrategySpace space = Restricted(c, in);
  Strategy s;
  s.tp = 1;
  s.dp = 8;
  s.ep = 4;  // vLLM: ep = 1 or tp*dp = 8 only
  s.batch = 1;
  s.dims = MegatronDims();
  ClearAbsentOps(in.sim->problem().model, &s);
  ASSERT_TRUE(CheckStrategy(in.sim->problem().model, 8, s).ok());
  ASSERT_FALSE(engine::Launchable(c, in.sim->problem().model, s));
  Objective obj(*in.sim, space, 10, nullptr);
  const Evaluation e = obj.Evaluate(s);
  EXPECT_EQ(e.verdict, Verdict::kStructure);
  EXPECT_EQ(obj.calls(), 1);
  EXPECT_FALSE(obj.has_best());
  // The same point is valid for the unrestricted simulator (the guard, not memory, rejected it).
  EXPECT_TRUE(in.sim->Evaluate(s).valid() || in.sim->Evaluate(s).verdict != Verdict::kStructure);
  s.ep = 8;
  EXPECT_NE(obj.Evaluate(s).verdict, Verdict::kStructure);
}

}  // namespace
}  // namespace l2s
