// Tests of the RL searcher (rl.h): determinism, budget, masking, restarts and early exit,
// interruption, option parsing, and quality on small problems against the Megatron heuristic.
// Budgets are kept small (each 1,000-call search costs ~0.25 s of CPU) so the binary runs in a
// few seconds. Every test says which start it tests: the default `rl` is the pretrained warm start
// (warm=1), `rl(warm=0)` the cold searcher; properties of both (determinism, budget, masking,
// restarts, interruption, quality) run both (BothStarts), the sweep and compound-move tests run
// the cold searcher they were measured on.
#include "search/rl.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "hw/hw.h"
#include "model/presets.h"
#include "search/search.h"
#include "search/test_util.h"
#include "strategy/space.h"

namespace l2s {
namespace {

// Issue 43 ("one computation, one price") made token-divided attention pay the KV all-gather its
// prefill share needs; the tp=8 attention-none optimum these trap tests were built around (and the
// traps beside it) no longer exist in the cost model. Their problems are to be re-measured with
// the search layer's rework (issue 47); skipped, not deleted, so that the problems stay on record.
constexpr const char* kTrapGone =
    "trap measured in the cost landscape before issue 43's KV all-gather; to re-measure (issue 47)";

// One problem with its space (the space points into the simulator's copy of the model).
struct Instance {
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<StrategySpace> space;
};

Instance Make(const std::string& model, int gpus, int64_t context, SpaceOptions opt = {},
              const std::string& gpu = "h100") {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster(gpu, gpus);
  p.workload.mode = Mode::kDecode;
  p.workload.context = context;
  p.workload.weight = p.model.weight_dtype;
  Instance in;
  in.sim = std::make_unique<Simulator>(std::move(p));
  const Problem& q = in.sim->problem();
  in.space = std::make_unique<StrategySpace>(*StrategySpace::Make(q.model, q.cluster.num_gpus, opt));
  return in;
}

// The paper's smaller model at 16k context on 1,024 H100s: a 2.6e7-point space where tp must
// divide 96 heads and ep must divide both 16 experts and the GPUs per stage, so unmasked sampling
// proposes structurally invalid strategies often.
Instance Paper() { return Make("gpt-moe-1.2t", 1024, 16384); }

// Records what the searcher evaluated; optionally cancels after `cancel_after` calls.
class Recorder : public Observer {
 public:
  explicit Recorder(const StrategySpace& space, int64_t cancel_after = 0)
      : space_(space), cancel_after_(cancel_after) {}
  void OnEvaluation(const Strategy& s, const Evaluation& e) override {
    ++evaluations;
    if (e.verdict == Verdict::kStructure || !space_.Check(s).ok()) ++structural;
    if (e.valid()) best = std::max(best, e.tokens_per_s_per_gpu);
    texts.push_back(ToText(s));
    strategies.push_back(s);
    verdicts.push_back(e.verdict);
  }
  bool Cancelled() override { return cancel_after_ > 0 && evaluations >= cancel_after_; }

  int64_t evaluations = 0;
  int64_t structural = 0;
  double best = 0;
  std::vector<std::string> texts;
  std::vector<Strategy> strategies;
  std::vector<Verdict> verdicts;

 private:
  const StrategySpace& space_;
  int64_t cancel_after_;
};

// `spec` with warm=0 added: "rl" -> "rl(warm=0,templates=0)", "rl(mask=0)" ->
// "rl(mask=0,warm=0,templates=0)": the cold searcher without its serving-shape start (rl.h 26.),
// whose deterministic climb would take the short budgets of the tests that use this.
std::string Cold(const std::string& spec) {
  if (spec == "rl") return "rl(warm=0,templates=0)";
  return spec.substr(0, spec.size() - 1) + ",warm=0,templates=0)";
}

// The cold searcher (as above) and the default (pretrained warm start; since rl.h 31. from the
// serving shapes too) with the options of `spec`.
std::vector<std::string> BothStarts(const std::string& spec) { return {Cold(spec), spec}; }

std::unique_ptr<RlSearcher> Rl(const std::string& spec) {
  StatusOr<SearcherSpec> parsed = ParseSearcherSpec(spec);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  StatusOr<RlOptions> o = ParseRlOptions(*parsed);
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return std::make_unique<RlSearcher>(o.ok() ? *o : RlOptions{});
}

// Two searches are the same: the same proposals in the same order, trace and best.
void ExpectSameSearch(const Recorder& a, const Recorder& b, const SearchResult& r1,
                      const SearchResult& r2) {
  EXPECT_EQ(a.texts, b.texts);
  ASSERT_EQ(r1.trace.size(), r2.trace.size());
  for (size_t i = 0; i < r1.trace.size(); ++i) {
    EXPECT_EQ(r1.trace[i].call, r2.trace[i].call);
    EXPECT_EQ(r1.trace[i].value, r2.trace[i].value);
  }
  EXPECT_EQ(ToText(r1.best), ToText(r2.best));
}

double MegatronValue(const Instance& in) {
  auto mg = MakeSearcher("megatron");
  EXPECT_TRUE(mg.ok());
  SearchResult r = (*mg)->Search(*in.sim, *in.space, 0, 0, nullptr);
  EXPECT_TRUE(r.found);
  return r.eval.tokens_per_s_per_gpu;
}

TEST(RlSearcher, DeterministicForASeed) {
  Instance in = Paper();
  for (const std::string& spec : BothStarts("rl")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    Recorder a(*in.space), b(*in.space);
    SearchResult r1 = rl->Search(*in.sim, *in.space, 300, 7, &a);
    SearchResult r2 = rl->Search(*in.sim, *in.space, 300, 7, &b);
    ExpectSameSearch(a, b, r1, r2);  // the same 300 proposals in the same order
  }
  // Another seed explores differently (2.6e7 points: identical sequences would mean the seed is
  // ignored). Without the serving-shape start (rl.h 26.): with it, both searchers' first
  // calls here are the climb from the shapes, which no seed changes (the warm one's takes 995 of
  // 1,000 calls on this problem).
  for (const char* spec : {"rl(warm=0,templates=0)", "rl(templates=0)"}) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    Recorder a(*in.space), c(*in.space);
    rl->Search(*in.sim, *in.space, 300, 7, &a);
    rl->Search(*in.sim, *in.space, 300, 8, &c);
    EXPECT_NE(a.texts, c.texts);
  }
}

TEST(RlSearcher, ChargesEveryProposalAndStopsAtTheBudget) {
  Instance in = Paper();
  for (const std::string& spec : BothStarts("rl")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    // 137 is neither a multiple of the rollout (8) nor of the 5 chunks.
    for (int64_t budget : {0, 1, 137}) {
      Recorder rec(*in.space);
      SearchResult r = rl->Search(*in.sim, *in.space, budget, 1, &rec);
      EXPECT_EQ(r.calls, budget);
      EXPECT_EQ(rec.evaluations, budget);
      EXPECT_EQ(rl->last_stats().proposals, budget);
      EXPECT_FALSE(r.interrupted);
      if (budget == 0) {
        EXPECT_FALSE(r.found);
      }
    }
  }
}

TEST(RlSearcher, MaskingProposesOnlyStructurallyValidStrategies) {
  Instance in = Make("llama-3.1-70b", 8, 4096);
  for (const std::string& spec : BothStarts("rl")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    Recorder rec(*in.space);
    SearchResult r = rl->Search(*in.sim, *in.space, 600, 3, &rec);
    EXPECT_EQ(rec.evaluations, 600);
    EXPECT_EQ(rec.structural, 0);
    EXPECT_EQ(rl->last_stats().structural, 0);
    ASSERT_TRUE(r.found);
    EXPECT_TRUE(in.space->Check(r.best).ok());
  }
}

// On one 8-GPU node unmasked sampling can propose pp * tp > 8 (on the paper's 1,024 GPUs every
// combination of the per-head options happens to be structurally valid).
TEST(RlSearcher, UnmaskedSamplingRunsAndStillReturnsAValidBest) {
  Instance in = Make("llama-3.1-70b", 8, 4096);
  for (const std::string& spec : BothStarts("rl(mask=0)")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    Recorder rec(*in.space);
    SearchResult r = rl->Search(*in.sim, *in.space, 600, 3, &rec);
    EXPECT_EQ(r.calls, 600);
    // Without the mask the ablation does propose invalid structures (they get the -1 reward).
    EXPECT_GT(rec.structural, 0);
    EXPECT_EQ(rl->last_stats().structural, rec.structural);
    ASSERT_TRUE(r.found);
    EXPECT_TRUE(r.eval.valid());
    EXPECT_TRUE(in.space->Check(r.best).ok());
    // The reported value is the simulator's for the reported strategy.
    EXPECT_DOUBLE_EQ(in.sim->Evaluate(r.best).tokens_per_s_per_gpu, r.eval.tokens_per_s_per_gpu);
  }
}

// A llama-like dense model on one 8-GPU node: 7.7e5 strategies. The Megatron heuristic evaluates
// every (pp, tp, batch) with Megatron's dims; RL, cold or warm, must reach its value within 1,000
// calls.
TEST(RlSearcher, ReachesTheMegatronHeuristicOnASmallDenseProblem) {
  Instance in = Make("llama-3.1-70b", 8, 4096);
  const double megatron = MegatronValue(in);
  for (const std::string& spec : BothStarts("rl")) {
    auto rl = Rl(spec);
    for (uint64_t seed : {1, 2, 3}) {
      SearchResult r = rl->Search(*in.sim, *in.space, 1000, seed, nullptr);
      ASSERT_TRUE(r.found);
      EXPECT_GE(r.eval.tokens_per_s_per_gpu, megatron * (1 - 1e-9))
          << spec << " seed " << seed << ": " << ToText(r.best);
    }
  }
}

// The tp = 1 plateau of docs/dev/RL_STUDY.md: on one 8-GPU node the optimum of llama-3.1-8b and
// mixtral-8x7b is Megatron's tp = 2 strategy, and a tp = 1 incumbent (where every dim runs the
// same) used to trap the search (7/10 and 2/10 seeds at 1,000 calls). Canonical elites, jumps
// on the ordered heads and Megatron-dims group moves must reach it in every seed tried, cold or
// warm.
TEST(RlSearcher, LeavesTheTp1PlateauOnSmallClusters) {
  for (const char* model : {"llama-3.1-8b", "mixtral-8x7b"}) {
    Instance in = Make(model, 8, 4096);
    const double megatron = MegatronValue(in);
    for (const std::string& spec : BothStarts("rl")) {
      auto rl = Rl(spec);
      for (uint64_t seed : {1, 2, 3, 4, 5}) {
        SearchResult r = rl->Search(*in.sim, *in.space, 1000, seed, nullptr);
        ASSERT_TRUE(r.found);
        EXPECT_GE(r.eval.tokens_per_s_per_gpu, megatron * (1 - 1e-9))
            << model << " " << spec << " seed " << seed << ": " << ToText(r.best);
      }
    }
  }
}

// ... and on the paper's 1.2T model with the paper's budget it beats it (the oracle's optimum
// there is pp=2, tp=16, batch=16 with sp=on, above Megatron's best at tp=8).
TEST(RlSearcher, ReachesTheMegatronHeuristicOnThePaperProblem) {
  Instance in = Paper();
  const double megatron = MegatronValue(in);
  for (const std::string& spec : BothStarts("rl")) {
    auto rl = Rl(spec);
    SearchResult r = rl->Search(*in.sim, *in.space, 4000, 1, nullptr);
    ASSERT_TRUE(r.found) << spec;
    EXPECT_GE(r.eval.tokens_per_s_per_gpu, megatron * (1 - 1e-9)) << spec << ": "
                                                                   << ToText(r.best);
  }
}

// sweep=1 (pair sweep of the structural heads around the best when stalled): every call still
// charged, the budget respected, deterministic for a seed, and the sweep actually runs (the cold
// searcher; the sweep does not depend on the network).
TEST(RlSearcher, PairSweepRespectsTheBudgetAndIsDeterministic) {
  Instance in = Make("mixtral-8x7b", 8, 4096);
  auto a = Rl("rl(sweep=1,warm=0)");
  auto b = Rl("rl(sweep=1,warm=0)");
  Recorder ra(*in.space), rb(*in.space);
  SearchResult r1 = a->Search(*in.sim, *in.space, 1000, 3, &ra);
  SearchResult r2 = b->Search(*in.sim, *in.space, 1000, 3, &rb);
  EXPECT_EQ(r1.calls, 1000);
  EXPECT_EQ(ra.evaluations, 1000);
  EXPECT_EQ(ra.structural, 0);  // candidates are checked before they are evaluated
  EXPECT_EQ(a->last_stats().proposals, 1000);
  EXPECT_GE(a->last_stats().sweeps, 1);
  EXPECT_EQ(ra.texts, rb.texts);
  EXPECT_EQ(r1.eval.tokens_per_s_per_gpu, r2.eval.tokens_per_s_per_gpu);
}

// dimgroups=1 (compound moves and group descents in the stalled sweep) on a MoE space with the
// slots and overlap heads: every call charged, the budget respected, no structurally invalid
// candidate evaluated, deterministic for a seed (the cold searcher).
TEST(RlSearcher, GroupDescentRespectsTheBudgetAndIsDeterministic) {
  Instance in = Make("qwen3-30b-a3b", 8, 4096);
  ASSERT_GE(in.space->overlap_head(), 0);
  auto a = Rl("rl(dimgroups=1,warm=0)");
  auto b = Rl("rl(dimgroups=1,warm=0)");
  Recorder ra(*in.space), rb(*in.space);
  SearchResult r1 = a->Search(*in.sim, *in.space, 1500, 5, &ra);
  SearchResult r2 = b->Search(*in.sim, *in.space, 1500, 5, &rb);
  EXPECT_EQ(r1.calls, 1500);
  EXPECT_EQ(ra.evaluations, 1500);
  EXPECT_EQ(ra.structural, 0);
  EXPECT_EQ(a->last_stats().proposals, 1500);
  EXPECT_GE(a->last_stats().sweeps, 1);
  EXPECT_EQ(ra.texts, rb.texts);
  EXPECT_EQ(r1.eval.tokens_per_s_per_gpu, r2.eval.tokens_per_s_per_gpu);
  // The other option value changes the search (the same seed, other candidates).
  auto c = Rl("rl(dimgroups=0,warm=0)");
  Recorder rc(*in.space);
  c->Search(*in.sim, *in.space, 1500, 5, &rc);
  EXPECT_NE(ra.texts, rc.texts);
}

// `model` served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on `gpus` GPUs of type `gpu`.
Instance Serve(const std::string& model, const std::string& gpu, int gpus) {
  Instance in;
  in.sim = std::make_unique<Simulator>(testing::RealServe(model, gpu, gpus));
  in.space = std::make_unique<StrategySpace>(*StrategySpace::Make(in.sim->problem().model, gpus));
  return in;
}

Instance KimiServe(const std::string& gpu, int gpus) { return Serve("kimi-k2", gpu, gpus); }

// deepseek-v3 prefill of `isl` tokens on `gpus` GPUs of type `gpu` (its fp8 weights).
Instance DeepSeekPrefill(const std::string& gpu, int gpus, int64_t isl) {
  Problem p;
  p.model = *ModelPreset("deepseek-v3");
  p.cluster = *MakeCluster(gpu, gpus);
  p.workload.mode = Mode::kPrefill;
  p.workload.isl = isl;
  p.workload.weight = p.model.weight_dtype;
  Instance in;
  in.sim = std::make_unique<Simulator>(std::move(p));
  in.space = std::make_unique<StrategySpace>(*StrategySpace::Make(in.sim->problem().model, gpus));
  return in;
}

// The exact optimum's tokens/s per GPU (0 when the oracle finds nothing).
double OracleValue(const Instance& in) {
  auto oracle = MakeSearcher("oracle");
  EXPECT_TRUE(oracle.ok());
  if (!oracle.ok()) return 0;
  const SearchResult best = (*oracle)->Search(*in.sim, *in.space, 0, 0, nullptr);
  return best.found ? best.eval.tokens_per_s_per_gpu : 0;
}

// The searches `with` and `off` (a mechanism on and off) of `in`, `budget` calls, `seed`; both find
// a valid strategy (checked).
std::pair<SearchResult, SearchResult> WithAndWithout(const Instance& in, int64_t budget,
                                                     uint64_t seed, const std::string& with,
                                                     const std::string& off) {
  std::pair<SearchResult, SearchResult> r{
      Rl(with)->Search(*in.sim, *in.space, budget, seed, nullptr),
      Rl(off)->Search(*in.sim, *in.space, budget, seed, nullptr)};
  EXPECT_TRUE(r.first.found) << with;
  EXPECT_TRUE(r.second.found) << off;
  return r;
}

// The trap of docs/dev/RL_STUDY.md that dimgroups removes: kimi-k2 served (2,048 in / 512 out, TTFT
// 2 s, TPOT 50 ms) on 32 H100s, where every seed of the searcher without it stops at
// pp=1,tp=1,ep=32 (0.984 of the optimum): the optimum has tp=8 with attention whole on each GPU
// of the tp group (dims none) and 8x the batch, several heads away. With the compound moves
// (tp 1 -> 2 -> ..., each followed by a group descent) the search reaches 0.99 of the exact
// optimum; without them it does not (the cold searcher, seed 1, 4,000 calls; measured, see
// RL_STUDY.md).
TEST(RlSearcher, CompoundMovesLeaveTheTp1TrapOfAServeProblem) {
  GTEST_SKIP() << kTrapGone;
  const Instance in = KimiServe("h100", 32);
  const Simulator& sim = *in.sim;
  const StrategySpace& space = *in.space;
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  SearchResult with = Rl("rl(dimgroups=1,warm=0)")->Search(sim, space, 4000, 1, nullptr);
  SearchResult without = Rl("rl(dimgroups=0,warm=0)")->Search(sim, space, 4000, 1, nullptr);
  ASSERT_TRUE(with.found && without.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(without.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(without.best);
}

// kimi-k2 served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on 64 H200s: without near-SLO
// screening every climb stops at pp=2,tp=8,ep=32,batch=128,overlap=sbo (0.641 of the optimum,
// docs/dev/RL_STUDY.md). The way out, pp 2 -> 1 with overlap tbo, is worth 0.546 of the optimum at
// batch 128 and misses TPOT by 4% at batch 256, so screened by value it is never descended from;
// ranked by its potential at batch 256 it is, and its group descent (the MoE pair) reaches the
// optimum at batch 256. Seed 1, 4,000 calls, the cold searcher (measured: it reaches the optimum
// in 10 of 10 seeds, with nearslo=0 in 1 of 10); the default (warm) start reaches it too.
TEST(RlSearcher, NearSloScreeningReachesTheIslandOfAServeProblem) {
  const Instance in = KimiServe("h200", 64);
  const Simulator& sim = *in.sim;
  const StrategySpace& space = *in.space;
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  auto with_rl = Rl("rl(warm=0)");
  Recorder rec(space);
  SearchResult with = with_rl->Search(sim, space, 4000, 1, &rec);
  SearchResult without = Rl("rl(warm=0,nearslo=0)")->Search(sim, space, 4000, 1, nullptr);
  SearchResult warm = Rl("rl")->Search(sim, space, 4000, 1, nullptr);
  ASSERT_TRUE(with.found && without.found && warm.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(without.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(without.best);
  EXPECT_GE(warm.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(warm.best);
  // Every call charged, none structurally invalid.
  EXPECT_EQ(with.calls, 4000);
  EXPECT_EQ(rec.evaluations, 4000);
  EXPECT_EQ(rec.structural, 0);
  EXPECT_EQ(with_rl->last_stats().proposals, 4000);
}

// `spec` with the options of rl.h 18.-20., 23.-28. and 31. off: "rl(warm=0)" ->
// "rl(warm=0,repair=0,...)" (the cold searcher with the first lifetime of the paper, rl.h 19.).
std::string Pre18(const std::string& spec) {
  const std::string off =
      "repair=0,triple=0,first=0,prior_from=1,spscan=0,dpsp=0,schedattn=0,ppsp=0,templates=0,"
      "epfit=0,triphalf=0,epmega=0,recipemoves=0";
  if (spec == "rl") return "rl(" + off + ")";
  return spec.substr(0, spec.size() - 1) + "," + off + ")";
}

// One mechanism (rl.h 13.-16.) on the problem that needs it: the searcher `with_base` (default
// the cold one; 4,000 calls, `seed`) reaches 0.99 of the exact optimum, and with `without_spec`
// (the mechanism off) it does not; every call charged, none structurally invalid.
void ExpectNeeded(const Instance& in, uint64_t seed, const std::string& without_spec,
                  const std::string& with_base = "rl(warm=0)") {
  // Measured before rl.h 18. (repair, triple, first), which changes the seeds' paths (with it
  // several of these seeds reach the optimum without the mechanism too): both run without it,
  // and without 19., 20., 23.-28., 31. and 34. (the cold schedule, spscan, dpsp, schedattn, ppsp,
  // templates, epfit, triphalf, epmega, recipemoves), which change the paths too.
  const std::string with_spec = Pre18(with_base), without = Pre18(without_spec);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  Recorder rec(*in.space);
  SearchResult with = Rl(with_spec)->Search(*in.sim, *in.space, 4000, seed, &rec);
  SearchResult off = Rl(without)->Search(*in.sim, *in.space, 4000, seed, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.99 * opt) << without << ": " << ToText(off.best);
  EXPECT_EQ(with.calls, 4000);
  EXPECT_EQ(rec.evaluations, 4000);
  EXPECT_EQ(rec.structural, 0);
}

// coupled=1: deepseek-v3 served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on 256 H100s. Without
// the coupled scans seed 1 stops at pp=1,tp=4,ep=64,batch=64,overlap=sbo with attention, MoE and
// shared pairs `none` (0.962 of the optimum): the optimum has overlap tbo, attention
// `none,none,dim0`, the MoE pair `dim0/none` and the shared pair `dim0/none`, and the descent from
// the tbo move takes attention `dim0,none,dim0` (its best option alone) and ends at 0.92-0.93. The
// attention x MoE-pair scan of that near miss finds the pair together (RL_STUDY.md).
TEST(RlSearcher, CoupledScansLeaveTheMoeBlockTrapOfAServeProblem) {
  GTEST_SKIP() << kTrapGone;
  ExpectNeeded(Serve("deepseek-v3", "h100", 256), 1, "rl(warm=0,coupled=0)");
}

// deepen=1: deepseek-v3 decode at 4k on 144 H800s, seed 3. The policy finds only pp = 9
// configurations, and every climb ends at pp=9,tp=2,ep=16,batch=256 (0.83 of the optimum,
// pp=1,tp=4,ep=72,batch=512): no move of one or two heads one option either way leaves it, and
// the later sweeps repeat the same (known, free) descents. From the repeated end the wide moves
// (every pp option with every ep option) and the doubled descents reach the optimum's region.
TEST(RlSearcher, DeeperClimbsLeaveARepeatedTrap) {
  ExpectNeeded(Make("deepseek-v3", 144, 4096, {}, "h800"), 3, "rl(warm=0,deepen=0)");
}

// deepnow=1: kimi-k2 served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on 256 H100s, seed 5
// (seed 1 until membound: with the calls it saves, seed 1 reaches 0.99 without deepnow too), with
// schedpair off (with it, the overlap x MoE-pair scan leaves this trap too, deepnow or not). The
// search without it ends at pp=1,tp=2,ep=32,batch=32,overlap=tbo (0.977 of the optimum,
// pp=1,tp=16,ep=32,batch=256 with attention `none` and sp on): the descents of the four best
// screened moves are all worse, and no later climb ends there a second time before the budget
// does, so deepen's wide moves never run. Widened at the climb's first end (traced on seed 1: 259 screened
// moves, eight descents), a descent reaches pp=1,tp=4,batch=64 with attention `none` and sp on,
// and the climb goes on from there to the optimum.
TEST(RlSearcher, WidenedPassAtTheFirstEndLeavesAServeTrap) {
  ExpectNeeded(KimiServe("h100", 256), 5, "rl(warm=0,schedpair=0,deepnow=0)",
               "rl(warm=0,schedpair=0)");
}

// schedpair=1: the same problem, the default (warm) searcher, seed 1. Its climb goes from
// pp=1,tp=2,overlap=sbo with the MoE pair `none/none` to pp=1,tp=8,batch=128 (353.2 tok/s/GPU)
// and on to pp=8,tp=8 (355.3, 0.929 of the optimum), where the widened pass finds no way out.
// From pp=1,tp=8 overlap tbo alone misses the TPOT limit (67.6 ms) and the MoE pair `dim0/dim1`
// alone too (51.7 ms); together they give 379.1 (0.991, TPOT 42.2 ms; `l2s eval`). The descents
// of the climb end in such near misses (pp=1,tp=8 at 353.2 is one), whose coupled scans now
// include every joint option of the overlap head and the MoE pair, and the search reaches the
// optimum (pp=1,tp=16,batch=256, overlap tbo, `dim0/dim1`).
TEST(RlSearcher, ScheduleAndMoePairScanLeavesAWarmServeTrap) {
  ExpectNeeded(KimiServe("h100", 256), 1, "rl(schedpair=0)", "rl");
}

// tripfirst=1 (rl.h 21.): deepseek-v3 decode at 4k on 144 H800s, cold, 4,000 calls, seed 10.
// With the router x MoE x shared scan after the pair and schedule scans, the search ends at
// pp=1,tp=4,ep=144 (0.982 of the optimum, pp=1,tp=4,ep=72 with the router `none` and the MoE and
// shared pairs `dim0/none`): its last climb reaches tp = 4 at call ~3,670, and the descent from
// the ep 144 -> 72 move (expert dims `none`, 2,184.5 tok/s/GPU against the climb's 2,194.2) ends
// within 1% of it at call ~3,905, so the budget ends in the pair scans before the triple scan
// that needs it (`l2s eval`: from the optimum the router `dim0` alone gives 2,114.0 and the shared
// pair `dim0/dim0` alone 2,074.1). With the triple scan first the search leaves it. Both run
// without the serving-shape start (rl.h 26.): measured when the widest-ep shapes on 144 GPUs were
// not valid (slots 0), so the search did not start from them; since they take slots 288 (the
// first slot option ep 144 divides) seed 10 reaches the optimum without tripfirst too. Both also
// run without rl.h 30.'s pairfirst, which changes this path (with pairfirst=2 and without the
// serving-shape start, seed 10 ends at 0.982 with tripfirst too; the default cold searcher,
// with that start, reaches 0.99 of it in seeds 1-20 at 4,000 calls either way), and without
// rl.h 31.'s epmega (with it and without the start, seed 10 ends at 0.982 with tripfirst too).
TEST(RlSearcher, TripleScanFirstLeavesTheDecodeTrapWithinTheBudget) {
  const Instance in = Make("deepseek-v3", 144, 4096, {}, "h800");
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  const SearchResult with =
      Rl("rl(warm=0,templates=0,pairfirst=0,epmega=0)")
          ->Search(*in.sim, *in.space, 4000, 10, nullptr);
  const SearchResult off = Rl("rl(warm=0,tripfirst=0,templates=0,pairfirst=0,epmega=0)")
                               ->Search(*in.sim, *in.space, 4000, 10, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(off.best);
  EXPECT_EQ(off.best.ep, 144) << ToText(off.best);
}

// pairfirst=1 (rl.h 30.): kimi-k2 decode at 4k on 64 H200s (one of RL_STUDY's held-out
// problems), cold, 300 calls, seed 1. Without it the search ends at pp=1,tp=4,ep=32, batch 1,024,
// attention `none,none,dim0` with the expert pair `dim0/none` (3,410.7 tokens/s per GPU, 0.987 of
// the optimum); the optimum takes attention `none,none,none` with the pair `dim0/dim1` (3,453.9),
// and each change alone is worse (`l2s eval`: 3,376.7 and 3,177.5). With it, the first climb's
// tp = 1 point (ep 32, 480 slots, the pair `dim0/none`: 3,350.8) scans the pair again after its
// descent moved the slots head, and `dim0/dim1` (3,426.8) puts the climb on the way to the optimum.
TEST(RlSearcher, AttentionNearOptionWithTheExpertPairLeavesAHeldOutTrap) {
  const Instance in = Make("kimi-k2", 64, 4096, {}, "h200");
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  EXPECT_NEAR(opt, 3453.92, 0.01);
  const SearchResult with = Rl("rl(warm=0)")->Search(*in.sim, *in.space, 300, 1, nullptr);
  const SearchResult off = Rl("rl(warm=0,pairfirst=0)")->Search(*in.sim, *in.space, 300, 1, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_NEAR(off.eval.tokens_per_s_per_gpu, 3410.67, 0.01) << ToText(off.best);
  EXPECT_LE(with.calls, 300);
}

// epmega (rl.h 31.): mixtral-8x7b served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on 16 H200s,
// 300 calls, seed 1. Every searcher's climb reaches pp=1,tp=1,ep=1 at batch 128 with the expert
// FFNs `none` (each GPU holds the whole model: 2,993.08 tokens/s per GPU, 0.952 of the optimum).
// The optimum is pp=4 with the experts sharded Megatron's way over the stage's four GPUs
// (3,142.57); the pp move with the expert dims kept screens below the climb's point (2,941 by
// `l2s eval`), and the climb ends there in every seed. The pp and ep moves also screened with
// Megatron's expert dims reach the optimum directly. The same moves take both searchers out of
// mixtral-8x7b decode at 4k on 16 H200s (a held-out problem; without them the climb from the
// serving shapes ends at pp=1,tp=4,ep=2, 4,548.02 tokens/s per GPU, 0.846 of the optimum).
TEST(RlSearcher, DegreeMovesWithMegatronExpertDimsLeaveTheMixtralServeTrap) {
  GTEST_SKIP() << kTrapGone;
  // Both searchers, seed 1, 300 calls: with epmega >= 0.99 of `opt` (checked against the oracle),
  // without it at `trap`.
  auto expect_escapes = [](const Instance& in, double opt, double trap) {
    EXPECT_NEAR(OracleValue(in), opt, 0.01);
    for (const auto& [with_spec, without_spec] :
         {std::pair<const char*, const char*>{"rl", "rl(epmega=0)"},
          {"rl(warm=0)", "rl(warm=0,epmega=0)"}}) {
      const SearchResult with = Rl(with_spec)->Search(*in.sim, *in.space, 300, 1, nullptr);
      ASSERT_TRUE(with.found) << with_spec;
      EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt)
          << with_spec << " " << ToText(with.best);
      const SearchResult off = Rl(without_spec)->Search(*in.sim, *in.space, 300, 1, nullptr);
      ASSERT_TRUE(off.found) << without_spec;
      EXPECT_NEAR(off.eval.tokens_per_s_per_gpu, trap, 0.01) << without_spec << " "
                                                             << ToText(off.best);
    }
  };
  expect_escapes(Serve("mixtral-8x7b", "h200", 16), 3142.57, 2993.08);
  expect_escapes(Make("mixtral-8x7b", 16, 4096, {}, "h200"), 5376.99, 4548.02);
}

// megarepair=1 (rl.h 22.): llama-3.1-405b served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on 16
// H100s, cold, 300 calls. Its bf16 weights (about 810 GB of the cluster's 1,280 GB) fit only with
// every operator sharded over all 16 GPUs and a small batch, and the policy's proposals (and their
// lower batches) miss memory: in seeds 3 and 4 no valid strategy at all without the repair. After
// a lifetime's worth of calls (60 here) with nothing valid, a missed proposal is also tried with
// Megatron's dims, and the search reaches the optimum. Where a valid point comes earlier (every
// problem of the suite) the option changes nothing: the paper's 1.2T at 16k, seed 1, the same
// search with and without it.
TEST(RlSearcher, MegatronDimsRepairFindsATightMemoryProblem) {
  const Instance in = Serve("llama-3.1-405b", "h100", 16);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  for (uint64_t seed : {3, 4}) {
    const SearchResult with = Rl("rl(warm=0)")->Search(*in.sim, *in.space, 300, seed, nullptr);
    const SearchResult off =
        Rl("rl(warm=0,megarepair=0)")->Search(*in.sim, *in.space, 300, seed, nullptr);
    ASSERT_TRUE(with.found) << seed;
    EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << seed << ": " << ToText(with.best);
    EXPECT_FALSE(off.found) << seed << ": " << ToText(off.best);
  }
  const Instance paper = Paper();
  Recorder a(*paper.space), b(*paper.space);
  const SearchResult r1 = Rl("rl(warm=0)")->Search(*paper.sim, *paper.space, 1000, 1, &a);
  const SearchResult r2 =
      Rl("rl(warm=0,megarepair=0)")->Search(*paper.sim, *paper.space, 1000, 1, &b);
  ExpectSameSearch(a, b, r1, r2);
}

// dpsp=1 and schedattn=1 (rl.h 23., 24.): deepseek-v3 decode at 4k on 64 H100s, cold, 1,000
// calls, seed 1. The optimum is pp=1,tp=4,ep=64,batch=512 with overlap tbo, attention
// `dim1,none,dim0`, the router `dim0` and the shared pair `dim0/dim0` (2,149.7 tok/s/GPU). From the
// climb's pp=1,tp=1,ep=64 point (1,997.5), the tp 1 -> 2 move with the attention dims `none` and sp
// off computes every token of the group on each GPU (1,894.1, ranked below four other moves); with
// sp on it is the tp = 1 point spread over the group (1,997.5) and is descended from at once, to
// 2,004.2 (`l2s eval`). From tp=2 the tp 2 -> 4 move descends to 2,003.6, a near miss: at
// tp=4,batch=512 with attention `none` and sbo, tbo alone gives 1,919.0 and attention
// `dim1,none,dim0` alone 1,764.9, both together 2,099.1 (two-batch overlap hides the attention's
// all-reduces behind the other half's compute), and the descent from there takes the router and
// shared pair to the optimum. Without dpsp the search reaches tp = 2 too late for the rest; without
// schedattn no scan changes overlap and attention together: both end at 2,004.2 (0.932).
TEST(RlSearcher, SplitTokensAndOverlapAttentionScanReachADecodeOptimum) {
  const Instance in = Make("deepseek-v3", 64, 4096);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  // Measured before the serving-shape start (rl.h 26.), which starts this search elsewhere.
  const SearchResult with =
      Rl("rl(warm=0,templates=0)")->Search(*in.sim, *in.space, 1000, 1, nullptr);
  ASSERT_TRUE(with.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  for (const char* spec : {"rl(warm=0,templates=0,dpsp=0)", "rl(warm=0,templates=0,schedattn=0)"}) {
    const SearchResult off = Rl(spec)->Search(*in.sim, *in.space, 1000, 1, nullptr);
    ASSERT_TRUE(off.found) << spec;
    EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.95 * opt) << spec << ": " << ToText(off.best);
  }
}

// ppsp=1 (rl.h 25.): the paper's 1.2T decode at 64k on 1,024 H100s, cold, 1,000 calls, seed 9.
// Without it the search ends at pp=2,tp=32,ep=16,batch=8 with sp off and tbo (7.912 tok/s/GPU,
// 0.978 of the optimum: pp=1 with sp on, the embedding `none`, 8.089). There sp on gives 7.898, a
// little worse, so the climb keeps sp off; the pp 2 -> 1 move with it gives 7.355 (0.91, screened
// below the four moves descended from), with sp on 8.077 (`l2s eval`). Tried with sp's other
// option too, the pp move is the best screened one and its descent reaches the optimum.
TEST(RlSearcher, PipelineMovesWithTheOtherSpReachThePaperOptimum) {
  const Instance in = Make("gpt-moe-1.2t", 1024, 65536);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  const auto [with, off] = WithAndWithout(in, 1000, 9, "rl(warm=0)", "rl(warm=0,ppsp=0)");
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_EQ(with.best.pp, 1) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.98 * opt) << ToText(off.best);
  EXPECT_EQ(off.best.pp, 2) << ToText(off.best);
}

// templates=1 (rl.h 26., the cold searcher's default): deepseek-v3 served (2,048 in / 512 out,
// TTFT 2 s, TPOT 50 ms) on 256 H100s, cold, 1,000 calls, seed 1. The search evaluates the usual
// serving shapes first (pp=1, ep=64, tp=1 with every dim `none`, then tp=8 with Megatron's dims)
// and climbs from them at once; the optimum (pp=1,tp=4,ep=64,batch=64, tbo, attention
// `none,none,dim0`, the MoE pair `dim0/none`, the shared pair `dim0/none`) is a few compound moves
// from the first. Without them the policy's 250 calls start the climb at pp=8,tp=1,ep=32 (0.83 of
// the optimum, traced) and the budget ends at pp=1,tp=4 with sbo and every dim `none` (0.962) or
// at tp=2 (0.956). A prefill problem gets no templates (its usual shapes are others; measured:
// from them deepseek-v3 prefill on 32 H800s ends at 0.948 in every seed): the same search as
// templates=0 there.
TEST(RlSearcher, ServingTemplatesStartTheColdSearchNearAServeOptimum) {
  GTEST_SKIP() << kTrapGone;
  const Instance in = Serve("deepseek-v3", "h100", 256);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  Recorder rec(*in.space);
  const SearchResult with = Rl("rl(warm=0)")->Search(*in.sim, *in.space, 1000, 1, &rec);
  const SearchResult off =
      Rl("rl(warm=0,templates=0)")->Search(*in.sim, *in.space, 1000, 1, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.98 * opt) << ToText(off.best);
  ASSERT_FALSE(rec.strategies.empty());
  EXPECT_EQ(rec.strategies[0].pp, 1);
  EXPECT_EQ(rec.strategies[0].tp, 1);
  EXPECT_EQ(rec.strategies[0].ep, in.space->ep_options().back());

  Problem p = Make("deepseek-v3", 32, 4096, {}, "h800").sim->problem();
  p.workload.mode = Mode::kPrefill;
  p.workload.isl = 4096;
  Instance pre;
  pre.sim = std::make_unique<Simulator>(std::move(p));
  pre.space = std::make_unique<StrategySpace>(
      *StrategySpace::Make(pre.sim->problem().model, pre.sim->problem().cluster.num_gpus));
  Recorder a(*pre.space), b(*pre.space);
  const SearchResult r1 = Rl("rl(warm=0)")->Search(*pre.sim, *pre.space, 300, 1, &a);
  const SearchResult r2 = Rl("rl(warm=0,templates=0)")->Search(*pre.sim, *pre.space, 300, 1, &b);
  ExpectSameSearch(a, b, r1, r2);
}

// recipemoves=1 (rl.h 34.): qwen3-30b-a3b served (2,048 in / 512 out, TTFT 2 s, TPOT 50 ms) on
// 64 H200s, 300 calls, seed 1, warm and cold. The optimum (exact oracle, 6,230.79 tokens/s per
// GPU) is pp=2,tp=2,ep=32 at batch 512 with two-batch overlap and 160 expert slots. Both searchers
// climb from the serving shapes to the pure data-parallel point (pp=1,tp=1,ep=1, batch 256:
// 5,161.5) by call 134; from there each single or paired move raises ep one rung at a time, a
// pass of 100-150 calls each, and the optimum comes at call 840 in every seed (0.828 at 300).
// The recipe at pp=1 misses the TPOT at batch 256 (61.4 ms, traced with l2s eval); one pp option
// up, pp=2 with ep 32 over the whole stage, TBO and the most redundant slots that fit (160), it is
// the point below (6,199.0, 0.995 of the optimum), reached at call 258.
TEST(RlSearcher, RecipeMovesLeaveTheDataParallelTrapOfAServeProblem) {
  const Instance in = Serve("qwen3-30b-a3b", "h200", 64);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  StatusOr<Strategy> recipe = FromText(
      "pp=2,tp=1,dp=32,ep=32,batch=256,sp=on,slots=160,overlap=tbo,embed=none,attn_qkv=none,"
      "attn_core=none,attn_out=none,moe_router=none,moe_ffn1=none,moe_ffn2=none,lm_head=none",
      64);
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  ClearAbsentOps(in.sim->problem().model, &*recipe);
  ASSERT_TRUE(in.space->Check(*recipe).ok());
  const Evaluation e = in.sim->Evaluate(*recipe);
  ASSERT_TRUE(e.valid());
  EXPECT_GE(e.tokens_per_s_per_gpu, 0.99 * opt);
  for (const char* spec : {"rl", "rl(warm=0)"}) {
    const std::string off =
        std::string(spec) == "rl" ? "rl(recipemoves=0)" : "rl(warm=0,recipemoves=0)";
    const auto [with, without] = WithAndWithout(in, 300, 1, spec, off);
    EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << spec << " " << ToText(with.best);
    EXPECT_LT(without.eval.tokens_per_s_per_gpu, 0.9 * opt) << off << " " << ToText(without.best);
  }
}

// epfit=1 (rl.h 27.): deepseek-v3 prefill of 4,096 tokens on 128 H100s, cold, 1,000 calls, seed 3.
// The climb reaches pp=4,tp=1,ep=32 (traced: 8,409.7 tok/s/GPU with 320 slots and tbo). From there
// pp 4 -> 16 leaves 8 GPUs per stage, which ep 32 does not fit: the plain move is not a point of
// the space, and each ep move from pp=4 is worse. With epfit the pp move is also tried at the
// widest ep that fits (8: at best 8,515.6) and at ep 1 (9,465.3 at batch 16), and the ep 1 move
// is taken at once; the climb ends at the optimum (pp=16,tp=8,ep=1, every dim `none`, 9,476.5).
// Without it the search ends at pp=4,tp=8,ep=32 (0.888). (A decode search is not helped: its
// traps are others, and the moves cost screening calls, RL_STUDY.md thirteenth pass.)
TEST(RlSearcher, PipelineMovesThatLowerEpReachThePrefillOptimum) {
  const Instance in = DeepSeekPrefill("h100", 128, 4096);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  const auto [with, off] = WithAndWithout(in, 1000, 3, "rl(warm=0)", "rl(warm=0,epfit=0)");
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_EQ(with.best.ep, 1) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.9 * opt) << ToText(off.best);
  EXPECT_EQ(off.best.ep, 32) << ToText(off.best);
}

// triphalf=1 (rl.h 28.): deepseek-v3 decode at 4k on 144 H800s, cold, seed 1. The optimum
// (2,234.4 tok/s/GPU) needs the router `none` with the MoE and shared pairs `dim0/none`, found by
// the coupled scans' triple scan of a near miss. The full scan evaluates 3 x 9 x 9 - 1 = 242
// points (traced: 284 calls with the fits and the descent that follows); with the better half of
// each pair (5 of 9 options alone, the current one included), 3 x 5 x 5 - 1 = 74 of them, plus
// the pairs' 16 options alone (known from the descent before: free). The search then reaches
// 0.98 of the optimum (2,194.2, the point a pass after the scans finds) within 1,000 calls, and
// the optimum within 1,500; with the whole product it is still at 0.978 at 1,000 calls and
// reaches the optimum at 1,330 calls (traced).
TEST(RlSearcher, BetterHalfTripleScanReachesTheWideEpDecodeSooner) {
  const Instance in = Make("deepseek-v3", 144, 4096, {}, "h800");
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  const auto [with, off] = WithAndWithout(in, 1000, 1, "rl(warm=0)", "rl(warm=0,triphalf=0)");
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.98 * opt) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.98 * opt) << ToText(off.best);
  const SearchResult longer = Rl("rl(warm=0)")->Search(*in.sim, *in.space, 1500, 1, nullptr);
  ASSERT_TRUE(longer.found);
  EXPECT_GE(longer.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(longer.best);
}

// Records, with each evaluation, the memory skips the searcher had made before it (RlStats is
// updated during the search).
class SkipRecorder : public Recorder {
 public:
  SkipRecorder(const StrategySpace& space, const RlSearcher* rl) : Recorder(space), rl_(rl) {}
  void OnEvaluation(const Strategy& s, const Evaluation& e) override {
    skips_before.push_back(rl_->last_stats().memory_skips);
    Recorder::OnEvaluation(s, e);
  }
  std::vector<int64_t> skips_before;

 private:
  const RlSearcher* rl_;
};

// membound=1 (rl.h 15.) makes the same choices with fewer calls: deepseek-v3 decode at 4k on 144
// H800s, 1,000 calls, seed 1. Walking the evaluations of membound=0 and membound=1 side by side,
// the whole membound=0 search is membound=1's first evaluations with memory misses in between
// (traced: 896 of them and 104 misses, the 104 candidates membound=1 knew to miss without a
// call); membound=1 spends the 104 calls it saved after that (and knows 28 more misses there).
TEST(RlSearcher, MemoryBoundLeavesOutOnlyMemoryMisses) {
  const Instance in = Make("deepseek-v3", 144, 4096, {}, "h800");
  // repair=0, first=0: a candidate skipped before the policy's last call shifts the calls that
  // time the network lifetimes and the sweeps (a repair in the policy phase; a descent before
  // the call at which `first` starts the next sweep), so the same-choices walk below holds with
  // them off (RepairMissedProposalsAtALowerBatch checks repair's own skips).
  Recorder off(*in.space);
  Rl("rl(warm=0,membound=0,repair=0,first=0)")->Search(*in.sim, *in.space, 1000, 1, &off);
  auto rl = Rl("rl(warm=0,repair=0,first=0)");
  SkipRecorder on(*in.space, rl.get());
  rl->Search(*in.sim, *in.space, 1000, 1, &on);
  ASSERT_EQ(off.evaluations, 1000);
  ASSERT_EQ(on.evaluations, 1000);
  size_t i = 0, j = 0;
  int64_t left_out = 0, left_out_before_last_match = 0;
  while (i < off.texts.size() && j < on.texts.size()) {
    if (off.texts[i] == on.texts[j]) {
      left_out_before_last_match = left_out;
      ++i, ++j;
    } else if (off.verdicts[i] == Verdict::kMemory) {
      ++i, ++left_out;
    } else {
      break;
    }
  }
  EXPECT_EQ(i, off.texts.size());  // every membound=0 evaluation matched or a memory miss
  EXPECT_GT(left_out, 0);
  // The calls saved are spent after the matched ones: on's evaluations after the j-th continue
  // the search past where the membound=0 run's budget ended.
  EXPECT_EQ(j + static_cast<size_t>(left_out), on.texts.size());
  // Each memory miss left out before the last matched evaluation is one skip before it (the
  // continuation may skip more: its skips are counted in the total only).
  ASSERT_GT(j, 0u);
  EXPECT_EQ(left_out_before_last_match, on.skips_before[j - 1]);
  EXPECT_GE(rl->last_stats().memory_skips, left_out);
}

// Evaluation i repeats evaluation i - 1 (invalid for memory or a latency limit) at a smaller batch.
bool LowersTheMissedBatch(const Recorder& r, size_t i) {
  if (i == 0) return false;
  const Verdict v = r.verdicts[i - 1];
  if (v != Verdict::kMemory && v != Verdict::kTpot && v != Verdict::kTtft) return false;
  Strategy a = r.strategies[i - 1], b = r.strategies[i];
  if (!(b.batch < a.batch)) return false;
  b.batch = a.batch;
  return a == b;
}

// repair (rl.h 18.): with the sweeps off every call is a policy proposal or a repair. On the
// paper's 1.2T model at 16k (most proposals miss memory there) each repair call re-evaluates the
// proposal just missed, or the repair just missed, at a smaller batch, at most `repair` of them
// in a row; the repair calls counted are exactly those; without repair there are none.
TEST(RlSearcher, RepairMissedProposalsAtALowerBatch) {
  const Instance in = Paper();
  for (int repair : {0, 1, 2}) {
    const std::string spec = fmt::format("rl(warm=0,sweep=0,repair={})", repair);
    auto rl = Rl(spec);
    Recorder rec(*in.space);
    const SearchResult r = rl->Search(*in.sim, *in.space, 600, 1, &rec);
    ASSERT_TRUE(r.found) << spec;
    EXPECT_EQ(rec.evaluations, 600) << spec;
    int64_t repairs = 0;
    int run = 0, longest = 0;
    for (size_t i = 0; i < rec.strategies.size(); ++i) {
      run = LowersTheMissedBatch(rec, i) ? run + 1 : 0;
      repairs += run > 0;
      longest = std::max(longest, run);
    }
    EXPECT_EQ(repairs, rl->last_stats().repairs) << spec;
    EXPECT_LE(longest, repair) << spec;
    if (repair > 0) {
      EXPECT_GT(repairs, 50) << spec;
    }
  }
}

// triple (rl.h 18.): the paper's 1.6T at 32k on 1,024 H100s, 1,000 calls, seed 5 (with the other
// options of 18. on, seeds 5, 7 and 10 of 1..10 end so without triples). Without the triples the
// climb ends at pp=4,tp=8,ep=16,overlap=sbo (0.904 of the optimum,
// pp=2,tp=32,ep=8,overlap=tbo): every move of one head and every pair is worse there, and the
// deepened passes that would leave it (13.) come after the budget. pp 4 -> 2 with tp 8 -> 16 and
// overlap tbo is better at once (0.927 with the same dims at its own batch, `l2s eval`), and the
// climb goes on to the optimum.
TEST(RlSearcher, TriplesLeaveThePaperTrapWithinAThousandCalls) {
  const Instance in = Make("gpt-moe-1.6t", 1024, 32768);
  const double opt = OracleValue(in);
  ASSERT_GT(opt, 0);
  const SearchResult with = Rl("rl(warm=0)")->Search(*in.sim, *in.space, 1000, 5, nullptr);
  const SearchResult off = Rl("rl(warm=0,triple=0)")->Search(*in.sim, *in.space, 1000, 5, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, 0.99 * opt) << ToText(off.best);
  EXPECT_EQ(with.calls, 1000);
}

// first (rl.h 18.): the main loop's first sweep starts once first x the budget calls are made at
// the latest (checked before each proposal, which with its repairs costs at most 1 + repair
// calls); with first=0 a policy that keeps improving delays it past that (the paper's 1.6T at
// 32k, 1,000 calls: measured per seed below).
// The cap is first x the budget: 0.4 for the warm searcher, 0.25 for the cold one (rl.h 19.), so
// by call 400 (250) plus the proposal and its two repairs in progress.
TEST(RlSearcher, FirstSweepComesByTheBudgetShare) {
  const Instance in = Make("gpt-moe-1.6t", 1024, 32768);
  for (const auto& [spec, cap] : {std::pair<std::string, int64_t>{"rl(warm=0)", 250},
                                  std::pair<std::string, int64_t>{"rl", 400}}) {
    int later_without = 0;
    for (uint64_t seed : {1, 2, 3, 4, 5}) {
      auto rl = Rl(spec);
      rl->Search(*in.sim, *in.space, 1000, seed, nullptr);
      const RlStats& st = rl->last_stats();
      EXPECT_GE(st.first_sweep_call, 0) << spec << " " << seed;
      EXPECT_LE(st.first_sweep_call, cap + 1 + 2) << spec << " " << seed;
      auto off = Rl(spec.substr(0, 2) + "(first=0" + (spec == "rl" ? ")" : ",warm=0)"));
      off->Search(*in.sim, *in.space, 1000, seed, nullptr);
      later_without += off->last_stats().first_sweep_call > cap + 3;
    }
    EXPECT_GE(later_without, 1) << spec;
  }
}

// The cold searcher's defaults (rl.h 19.): rl(warm=0) reads its spec over ColdRlOptions()
// (prior_from=0, first=0.25), options the spec gives win, and the warm default keeps
// prior_from=1, first=0.4.
TEST(RlSearcher, ColdSearcherHasItsOwnSchedule) {
  const RlOptions cold = ColdRlOptions();
  EXPECT_EQ(cold.warm, 0);
  EXPECT_EQ(cold.prior_from, 0);
  EXPECT_DOUBLE_EQ(cold.first, 0.25);
  EXPECT_TRUE(cold.templates);
  EXPECT_TRUE(RlOptions{}.templates);
  EXPECT_EQ(Rl("rl(warm=0)")->name(), RlSpecText(cold));
  const RlOptions& given = Rl("rl(warm=0,prior_from=1,first=0.4)")->options();
  EXPECT_EQ(given.prior_from, 1);
  EXPECT_DOUBLE_EQ(given.first, 0.4);
  // Its name writes them out, so it reads back to the same options, not to the cold defaults.
  EXPECT_EQ(Rl(Rl("rl(warm=0,prior_from=1,first=0.4)")->name())->options().prior_from, 1);
  for (const char* warm : {"rl", "rl(warm=1)", "rl(warm=2)"}) {
    EXPECT_EQ(Rl(warm)->options().prior_from, 1) << warm;
    EXPECT_DOUBLE_EQ(Rl(warm)->options().first, 0.4) << warm;
  }
  // The schedule changes the search: the cold searcher's first lifetime proposes around the
  // elites, so its proposals differ from those of the paper's exploring first lifetime (both
  // without the serving-shape start of rl.h 26., whose climb takes these 300 calls).
  const Instance in = Paper();
  Recorder a(*in.space), b(*in.space);
  Rl("rl(warm=0,templates=0)")->Search(*in.sim, *in.space, 300, 2, &a);
  Rl("rl(warm=0,templates=0,prior_from=1,first=0.25)")->Search(*in.sim, *in.space, 300, 2, &b);
  EXPECT_NE(a.texts, b.texts);
}

// spscan=1 (rl.h 20.): mixtral-8x7b decode at 4k on one 8-GPU H100 node, cold, 1,000 calls, seed
// 1. Without the scans the search ends at Megatron's tp = 2 strategy but with sp on and the
// embedding `dim1`: 3,698.6 tok/s/GPU, below Megatron's 3,700.5 (sp off, embedding `dim0`, also
// the exact optimum). From there sp off alone gives 3,700.0 and then the embedding `dim0` 3,700.5
// (`l2s eval`): the point is the end of a group descent that chose sp (the first group after the
// batch) under other dims, and no climb descends from its own end again. The scan of sp with the
// embedding's dim at the climb's end takes the pair together.
TEST(RlSearcher, SpScansAtTheClimbsEndReachMegatronOnOneNode) {
  const Instance in = Make("mixtral-8x7b", 8, 4096);
  const double megatron = MegatronValue(in);
  // Measured before the serving-shape start (rl.h 26.), which starts this search elsewhere.
  const SearchResult with =
      Rl("rl(warm=0,templates=0)")->Search(*in.sim, *in.space, 1000, 1, nullptr);
  const SearchResult off =
      Rl("rl(warm=0,templates=0,spscan=0)")->Search(*in.sim, *in.space, 1000, 1, nullptr);
  ASSERT_TRUE(with.found && off.found);
  EXPECT_GE(with.eval.tokens_per_s_per_gpu, megatron * (1 - 1e-9)) << ToText(with.best);
  EXPECT_LT(off.eval.tokens_per_s_per_gpu, megatron * (1 - 1e-6)) << ToText(off.best);
  EXPECT_TRUE(off.best.sp) << ToText(off.best);
  EXPECT_FALSE(with.best.sp) << ToText(with.best);
}

// The call accounting of RlStats (rl_study's climb_calls, screen_calls, screened_moves): with the
// pair sweep off (the default) every charged call is a policy proposal, a repair or a climb's,
// and the climbs start with the first sweep, so the calls before it are the policy's and the
// repairs'. Screening is a part of the climbs. With the sweeps off there are no climbs.
TEST(RlSearcher, CallAccountingAddsUp) {
  const Instance in = Make("deepseek-v3", 64, 4096);
  for (uint64_t seed : {1, 2}) {
    // Without the serving-shape start (rl.h 26.), whose evaluations are none of the three.
    auto rl = Rl("rl(warm=0,templates=0)");
    const SearchResult r = rl->Search(*in.sim, *in.space, 1000, seed, nullptr);
    const RlStats& st = rl->last_stats();
    ASSERT_EQ(r.calls, 1000) << seed;
    EXPECT_EQ(st.proposals, r.calls) << seed;
    EXPECT_EQ(st.policy_calls + st.repairs + st.climb_calls, st.proposals) << seed;
    EXPECT_GE(st.first_sweep_call, 0) << seed;
    EXPECT_LE(st.climb_calls, st.proposals - st.first_sweep_call) << seed;
    EXPECT_GT(st.screen_calls, 0) << seed;
    EXPECT_LT(st.screen_calls, st.climb_calls) << seed;  // the descents cost calls too
    EXPECT_GT(st.screened_moves, 0) << seed;
  }
  auto off = Rl("rl(warm=0,templates=0,sweep=0)");
  off->Search(*in.sim, *in.space, 600, 1, nullptr);
  const RlStats& st = off->last_stats();
  EXPECT_EQ(st.climb_calls, 0);
  EXPECT_EQ(st.screen_calls, 0);
  EXPECT_EQ(st.screened_moves, 0);
  EXPECT_EQ(st.policy_calls + st.repairs, 600);
}

// epnone=1: deepseek-v3 prefill of 4,096 tokens on 128 H100s, seed 8. Without it the search stops
// at pp=16,tp=8,ep=8,batch=256,overlap=sbo (0.90 of the optimum, pp=16,tp=8,ep=1,batch=128 with
// the expert FFNs `none`): ep 8 -> 1 with the old expert dims is worse, and with them `none` it is
// the way to the optimum.
TEST(RlSearcher, EpMovesWithTheExpertDimsNoneReachThePrefillOptimum) {
  ExpectNeeded(DeepSeekPrefill("h100", 128, 4096), 8, "rl(warm=0,epnone=0)");
}

// batchfit=1 and diverse=1 (points compared at their own best batch, climbs restarted from other
// configurations) with pairsweep=0 and =1: every call charged, the budget respected, no
// structurally invalid candidate evaluated, deterministic for a seed; each option changes the
// search (the cold searcher).
TEST(RlSearcher, BatchFitAndDiverseClimbsRespectTheBudgetAndAreDeterministic) {
  Instance in = Make("qwen3-30b-a3b", 8, 4096);
  for (const char* spec : {"rl(batchfit=1,diverse=1,warm=0)",
                           "rl(batchfit=1,diverse=1,pairsweep=1,warm=0)"}) {
    auto a = Rl(spec);
    auto b = Rl(spec);
    Recorder ra(*in.space), rb(*in.space);
    SearchResult r1 = a->Search(*in.sim, *in.space, 1500, 5, &ra);
    SearchResult r2 = b->Search(*in.sim, *in.space, 1500, 5, &rb);
    EXPECT_EQ(r1.calls, 1500) << spec;
    EXPECT_EQ(ra.evaluations, 1500) << spec;
    EXPECT_EQ(ra.structural, 0) << spec;
    EXPECT_EQ(a->last_stats().proposals, 1500) << spec;
    EXPECT_GE(a->last_stats().sweeps, 2) << spec;
    EXPECT_EQ(ra.texts, rb.texts) << spec;
    EXPECT_EQ(r1.eval.tokens_per_s_per_gpu, r2.eval.tokens_per_s_per_gpu) << spec;
  }
  Recorder ra(*in.space), rb(*in.space);
  Rl("rl(warm=0)")->Search(*in.sim, *in.space, 1500, 5, &ra);
  Rl("rl(batchfit=0,warm=0)")->Search(*in.sim, *in.space, 1500, 5, &rb);
  EXPECT_NE(ra.texts, rb.texts);
  // On the paper's problem (seed 2, 4,000 calls) the first climb ends at a local optimum and a
  // later sweep starts from another configuration with diverse=1 only.
  Instance paper = Paper();
  auto d = Rl("rl(warm=0)");
  auto n = Rl("rl(diverse=0,warm=0)");
  Recorder rd(*paper.space), rn(*paper.space);
  d->Search(*paper.sim, *paper.space, 4000, 2, &rd);
  n->Search(*paper.sim, *paper.space, 4000, 2, &rn);
  EXPECT_GE(d->last_stats().diverse, 1);
  EXPECT_EQ(n->last_stats().diverse, 0);
  EXPECT_NE(rd.texts, rn.texts);
}

// A tiny space: one GPU, fixed batch, sp off -> only the 7 operator dims (3^7 = 2,187 points).
Instance Tiny() {
  SpaceOptions opt;
  opt.search_batch = false;
  opt.fixed_batch = 1;
  opt.search_sp = false;
  return Make("llama-3.1-8b", 1, 1024, opt);
}

TEST(RlSearcher, EarlyExitRestartsAConvergedPolicy) {
  Instance in = Tiny();
  // prior=0.99 with one elite: once it exists every head keeps its option with probability
  // >= 0.99 >= 0.95, i.e. the policy has converged by the paper's criterion; each lifetime must
  // then end at its next proposal and a new network start, while every call is still charged.
  for (const std::string& spec : BothStarts("rl(prior=0.99,prior_from=0,elites=1)")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    SearchResult r = rl->Search(*in.sim, *in.space, 200, 1, nullptr);
    EXPECT_EQ(r.calls, 200);
    ASSERT_TRUE(r.found);
    EXPECT_GT(rl->last_stats().early_exits, 150);
    EXPECT_GT(rl->last_stats().networks, 5);  // more lifetimes than the 5 budget chunks
  }
}

TEST(RlSearcher, EarlyExitFiresWhenTheNetworkLearnsToConverge) {
  Instance in = Make("llama-3.1-70b", 8, 4096);
  // Without the elite prior a fast-learning policy (paper shape, lr 0.01) collapses onto one
  // strategy within a 200-call chunk (the cold searcher's per-problem network).
  auto rl = Rl("rl(prior=0,rollout=2,lr=0.01,warm=0)");
  SearchResult r = rl->Search(*in.sim, *in.space, 1000, 1, nullptr);
  EXPECT_EQ(r.calls, 1000);
  EXPECT_GE(rl->last_stats().early_exits, 1);
}

TEST(RlSearcher, NoRestartsKeepsOneNetwork) {
  Instance in = Tiny();
  for (const std::string& spec : BothStarts("rl(prior=0.99,prior_from=0,elites=1,restarts=0)")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    SearchResult r = rl->Search(*in.sim, *in.space, 200, 1, nullptr);
    EXPECT_EQ(r.calls, 200);
    EXPECT_EQ(rl->last_stats().networks, 1);
    EXPECT_EQ(rl->last_stats().early_exits, 0);
  }
}

TEST(RlSearcher, ObserverInterruptionReturnsTheBestSoFar) {
  Instance in = Paper();
  for (const std::string& spec : BothStarts("rl")) {
    SCOPED_TRACE(spec);
    auto rl = Rl(spec);
    Recorder rec(*in.space, /*cancel_after=*/90);
    SearchResult r = rl->Search(*in.sim, *in.space, 4000, 5, &rec);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(r.calls, 90);
    EXPECT_EQ(rec.evaluations, 90);
    ASSERT_GT(rec.best, 0);  // 90 masked proposals on this problem include valid ones
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.eval.tokens_per_s_per_gpu, rec.best);
  }
}

TEST(RlSearcher, SpecOptionsParseValidateAndRoundTrip) {
  auto s = MakeSearcher("rl(elites=4,embed=32,hidden=16,attn=2,mask=0,shaping=off,restarts=false)");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string name = (*s)->name();
  EXPECT_NE(name.find("elites=4"), std::string::npos) << name;
  EXPECT_NE(name.find("embed=32"), std::string::npos) << name;
  EXPECT_NE(name.find("mask=0"), std::string::npos) << name;
  EXPECT_NE(name.find("shaping=0"), std::string::npos) << name;
  EXPECT_NE(name.find("restarts=0"), std::string::npos) << name;
  // The canonical name is itself a spec that makes the same searcher.
  auto again = MakeSearcher(name);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->name(), name);
  // The default spec's name states the defaults.
  auto d = MakeSearcher("rl");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->name(), RlSpecText(RlOptions{}));

  for (const char* bad : {"rl(foo=1)", "rl(embed=30,attn=4)", "rl(elites=0)", "rl(prior=1)",
                          "rl(mask=maybe)", "rl(lr=0)", "rl(converge=1.5)", "rl(rollout=x)",
                          "rl(invalid=1)", "rl(decay=1)", "rl(jump=1)", "rl(jump=-0.1)",
                          "rl(megadims=1.5)", "rl(canon=2)", "rl(sweep=maybe)",
                          "rl(dimgroups=2)", "rl(batchfit=2)", "rl(diverse=maybe)",
                          "rl(pairsweep=3)", "rl(pairmoves=x)", "rl(nearslo=2)",
                          "rl(dpattn=maybe)", "rl(stallmin=0)", "rl(stallmin=x)", "rl(warm=3)",
                          "rl(warm=-1)", "rl(coupled=-1)", "rl(coupled=x)", "rl(neargate=1.5)",
                          "rl(neargate=-0.1)", "rl(epnone=2)", "rl(deepen=maybe)", "rl(deepnow=2)",
                          "rl(membound=2)", "rl(schedpair=x)", "rl(feas=2)", "rl(nearmem=maybe)",
                          "rl(pairdp=x)", "rl(repair=17)", "rl(repair=-1)", "rl(repair=x)",
                          "rl(triple=2)", "rl(first=1.5)", "rl(first=-0.1)", "rl(first=x)",
                          "rl(spscan=2)", "rl(spscan=maybe)", "rl(tripfirst=2)",
                          "rl(megarepair=x)", "rl(dpsp=2)", "rl(schedattn=x)", "rl(ppsp=3)",
                          "rl(templates=2)", "rl(epfit=2)", "rl(triphalf=x)", "rl(nearmove=2)",
                          "rl(epmega=2)", "rl(memtrade=maybe)", "rl(nearscale=2)",
                          "rl(recipemoves=2)",
                          "rl(cycle=1)"}) {
    auto r = MakeSearcher(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    }
  }
}

// shaping=0 changes the rewards (beta = 0), hence the updates and the proposals that follow,
// cold and warm (without the serving-shape start, whose climb no reward changes:
// DeterministicForASeed).
TEST(RlSearcher, ShapingOptionChangesTheSearch) {
  Instance in = Paper();
  const std::vector<std::string> on = {"rl(warm=0,templates=0)", "rl(templates=0)"},
                                 off = {"rl(warm=0,templates=0,shaping=0)",
                                        "rl(templates=0,shaping=0)"};
  for (size_t i = 0; i < on.size(); ++i) {
    Recorder a(*in.space), b(*in.space);
    Rl(on[i])->Search(*in.sim, *in.space, 300, 4, &a);
    Rl(off[i])->Search(*in.sim, *in.space, 300, 4, &b);
    EXPECT_NE(a.texts, b.texts) << on[i];
  }
}

// The default searcher is the pretrained warm start (issue 14, item 3): `rl` and `rl(warm=1)`
// are the same searcher with the same name and the same search (proposals, trace, best), and the
// cold searcher `rl(warm=0)` searches differently; its name round-trips through RlSpecText and
// MakeSearcher to a searcher with the same search.
TEST(RlSearcher, DefaultIsTheWarmStartAndTheColdSpecRoundTrips) {
  Instance in = Paper();
  EXPECT_EQ(RlOptions{}.warm, 1);
  auto def = Rl("rl");
  auto warm = Rl("rl(warm=1)");
  EXPECT_EQ(def->options().warm, 1);
  EXPECT_EQ(def->name(), warm->name());
  EXPECT_EQ(def->name().find("warm"), std::string::npos) << def->name();
  Recorder a(*in.space), b(*in.space);
  const SearchResult r1 = def->Search(*in.sim, *in.space, 300, 3, &a);
  const SearchResult r2 = warm->Search(*in.sim, *in.space, 300, 3, &b);
  ExpectSameSearch(a, b, r1, r2);
  EXPECT_EQ(r1.searcher, r2.searcher);

  auto cold = Rl("rl(warm=0)");
  EXPECT_EQ(cold->options().warm, 0);
  const std::string name = cold->name();
  EXPECT_EQ(name, RlSpecText(cold->options()));
  ASSERT_GE(name.size(), 8u);
  EXPECT_EQ(name.substr(name.size() - 8), ",warm=0)") << name;
  auto again = Rl(name);
  EXPECT_EQ(again->name(), name);
  EXPECT_EQ(again->options().warm, 0);
  Recorder c(*in.space), d(*in.space);
  const SearchResult r3 = cold->Search(*in.sim, *in.space, 300, 3, &c);
  const SearchResult r4 = again->Search(*in.sim, *in.space, 300, 3, &d);
  ExpectSameSearch(c, d, r3, r4);
  // The default is not the cold searcher. Here both first climb from the serving shapes (rl.h
  // 26.; the warm searcher's since 31.), which takes these 300 calls; a prefill problem has no
  // such start, and there their first proposals differ.
  const Instance prefill = DeepSeekPrefill("h800", 32, 4096);
  Recorder e(*prefill.space), f(*prefill.space);
  def->Search(*prefill.sim, *prefill.space, 300, 3, &e);
  cold->Search(*prefill.sim, *prefill.space, 300, 3, &f);
  EXPECT_NE(e.texts, f.texts);
}

}  // namespace
}  // namespace l2s
