// The warm-start pieces of the RL searcher (issue 14, item 3): the problem-independent option
// features (search/rl_features.h), the shared network inside rl (warm=1/2), its determinism per
// seed, and weights carried from one problem to another of a different size.
#include "search/rl_features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "hw/hw.h"
#include "model/presets.h"
#include "search/rl.h"
#include "search/search.h"
#include "strategy/space.h"

namespace l2s {
namespace {

struct Instance {
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<StrategySpace> space;
};

Instance Make(const std::string& model, const std::string& gpu, int gpus) {
  Problem p;
  p.model = *ModelPreset(model);
  p.cluster = *MakeCluster(gpu, gpus);
  p.workload.mode = Mode::kDecode;
  p.workload.context = 4096;
  p.workload.weight = p.model.weight_dtype;
  Instance in;
  in.sim = std::make_unique<Simulator>(std::move(p));
  const Problem& q = in.sim->problem();
  in.space = std::make_unique<StrategySpace>(*StrategySpace::Make(q.model, q.cluster.num_gpus));
  return in;
}

// Row of head h's option named `option` in the feature matrix (-1 when absent).
int Row(const StrategySpace& s, const std::string& head, const std::string& option) {
  int row = 0;
  for (int h = 0; h < s.num_heads(); ++h) {
    for (int i = 0; i < s.head_size(h); ++i, ++row)
      if (s.head_name(h) == head && s.option_name(h, i) == option) return row;
  }
  return -1;
}

// The same option on two problems of different sizes (8 and 64 GPUs, so different option lists
// and row counts) has the same option features: head kind, dim, absolute log2 degree; only what
// is relative to the cluster differs, by the formula of rl_features.h.
TEST(RlFeatures, SameOptionSameFeaturesAcrossProblemSizes) {
  const Instance a = Make("llama-3.1-8b", "h100", 8);
  const Instance b = Make("llama-3.1-70b", "h200", 64);
  const nn::Mat fa = RlOptionFeatures(a.sim->problem(), *a.space);
  const nn::Mat fb = RlOptionFeatures(b.sim->problem(), *b.space);
  int ka = 0, kb = 0;
  for (int s : a.space->head_sizes()) ka += s;
  for (int s : b.space->head_sizes()) kb += s;
  ASSERT_EQ(fa.rows(), ka);
  ASSERT_EQ(fb.rows(), kb);
  ASSERT_NE(ka, kb);
  ASSERT_EQ(fa.cols(), RlFeatureCount());
  // Equivalent options: every option feature but the relative degree (20) and the position in the
  // list (22) is equal.
  for (const auto& [head, option] : std::vector<std::pair<std::string, std::string>>{
           {"attn_core", "none"}, {"attn_qkv", "dim1"}, {"dense_ffn2", "dim0"}, {"sp", "on"},
           {"tp", "8"}, {"pp", "2"}, {"batch", "64"}}) {
    const int ra = Row(*a.space, head, option), rb = Row(*b.space, head, option);
    ASSERT_GE(ra, 0) << head << "=" << option;
    ASSERT_GE(rb, 0) << head << "=" << option;
    for (int c = 0; c < kRlOptionFeatures; ++c) {
      if (c == 20 || c == 22) continue;
      EXPECT_EQ(fa(ra, c), fb(rb, c)) << head << "=" << option << " column " << c;
    }
  }
  // tp = the whole cluster is 1 on both (log2 8 / log2 8, log2 64 / log2 64); tp = 8 is 1 on 8
  // GPUs and 0.5 on 64.
  EXPECT_DOUBLE_EQ(fa(Row(*a.space, "tp", "8"), 20), 1.0);
  EXPECT_DOUBLE_EQ(fb(Row(*b.space, "tp", "8"), 20), 0.5);
  EXPECT_DOUBLE_EQ(fb(Row(*b.space, "pp", "64"), 20), 1.0);
  EXPECT_DOUBLE_EQ(fa(Row(*a.space, "tp", "8"), 21), 0.3);  // log2(8) / 10
  // The problem features are the same on every row of a problem and differ between the two
  // (GPU count: log2(8) / 10 against log2(64) / 10).
  const int g = kRlOptionFeatures + 3;
  EXPECT_DOUBLE_EQ(fa(0, g), 0.3);
  EXPECT_DOUBLE_EQ(fa(ka - 1, g), 0.3);
  EXPECT_DOUBLE_EQ(fb(0, g), 0.6);
  // Each row has exactly one head-kind column set.
  for (int r = 0; r < ka; ++r) EXPECT_DOUBLE_EQ(fa.row(r).head(20).sum(), 1.0);
}

TEST(RlFeatures, MoeHeadsHaveTheirFeatures) {
  const Instance in = Make("qwen3-30b-a3b", "h100", 16);
  const nn::Mat f = RlOptionFeatures(in.sim->problem(), *in.space);
  const int tbo = Row(*in.space, "overlap", "tbo");
  ASSERT_GE(tbo, 0);
  EXPECT_EQ(f(tbo, 29), 1.0);
  EXPECT_EQ(f(tbo, 28), 0.0);
  // Slots E + E/4 with E = 128 experts: 160 -> redundant fraction 4 * 32 / 128 = 1.
  const int slots = Row(*in.space, "slots", "160");
  ASSERT_GE(slots, 0);
  EXPECT_DOUBLE_EQ(f(slots, 27), 1.0);
  EXPECT_EQ(f(0, kRlOptionFeatures + 4), 1.0);  // MoE
}

std::unique_ptr<RlSearcher> Rl(RlOptions o) { return std::make_unique<RlSearcher>(o); }

// warm=2 (the shared network from random weights): a search is a pure function of its seed, and
// it returns the network's final weights, which then serve as initial weights on a problem of
// another size (warm_weights) with the same determinism.
TEST(RlWarm, DeterministicPerSeedAndWeightsCarryAcrossProblems) {
  const Instance a = Make("llama-3.1-8b", "h100", 8);
  const Instance b = Make("qwen3-30b-a3b", "a100", 16);
  RlOptions o;
  o.warm = 2;
  auto r1 = Rl(o), r2 = Rl(o);
  const SearchResult s1 = r1->Search(*a.sim, *a.space, 300, 7, nullptr);
  const SearchResult s2 = r2->Search(*a.sim, *a.space, 300, 7, nullptr);
  ASSERT_TRUE(s1.found);
  EXPECT_EQ(ToText(s1.best), ToText(s2.best));
  EXPECT_EQ(s1.trace.size(), s2.trace.size());
  const std::vector<double>& w = r1->last_stats().final_weights;
  ASSERT_EQ(static_cast<int>(w.size()), nn::OptionScorer::NumWeights(RlFeatureCount(),
                                                                     kRlScorerHidden));
  EXPECT_EQ(w, r2->last_stats().final_weights);
  EXPECT_NE(r1->name().find("warm=2"), std::string::npos);
  // Carried to another problem.
  o.warm_weights = w;
  o.warm_hidden = kRlScorerHidden;
  auto r3 = Rl(o), r4 = Rl(o);
  const SearchResult s3 = r3->Search(*b.sim, *b.space, 300, 3, nullptr);
  const SearchResult s4 = r4->Search(*b.sim, *b.space, 300, 3, nullptr);
  ASSERT_TRUE(s3.found);
  EXPECT_EQ(ToText(s3.best), ToText(s4.best));
  EXPECT_EQ(r3->last_stats().final_weights, r4->last_stats().final_weights);
  EXPECT_EQ(s3.calls, 300);
}

// warm=1 is the default: its name is the default searcher's, which does not mention warm (the
// spec text it had before); the other values are written out (rl(warm=0) is the cold searcher).
TEST(RlWarm, SpecOption) {
  StatusOr<std::unique_ptr<Searcher>> bad = MakeSearcher("rl(warm=3)");
  EXPECT_FALSE(bad.ok());
  StatusOr<std::unique_ptr<Searcher>> ok = MakeSearcher("rl(warm=1)");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const std::string def = (*MakeSearcher("rl"))->name();
  EXPECT_EQ((*ok)->name(), def);
  EXPECT_EQ(def.find("warm"), std::string::npos) << def;
  for (const char* spec : {"rl(warm=0)", "rl(warm=2)"}) {
    StatusOr<std::unique_ptr<Searcher>> other = MakeSearcher(spec);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    const std::string want = std::string(",warm=") + spec[8] + ")";
    EXPECT_NE((*other)->name().find(want), std::string::npos) << (*other)->name();
    EXPECT_EQ((*MakeSearcher((*other)->name()))->name(), (*other)->name());
  }
}

// The shipped weights (src/search/rl_pretrained.cc) fit this build's features, and on a problem
// whose model (llama-3.1-70b) and cluster (16 H200s) were held out of pretraining the warm search
// reaches 0.99 of the exact optimum within 300 calls in every one of 5 seeds (docs/dev/RL_STUDY.md,
// "Pretrained policy": 10/10 seeds, median 13 calls; the cold search's median is 150).
TEST(RlWarm, ShippedWeightsReachTheOptimumOnAHeldOutProblem) {
  const nn::ScorerWeights* w = PretrainedRlWeights();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->features, RlFeatureCount());
  EXPECT_EQ(static_cast<int>(w->values.size()), nn::OptionScorer::NumWeights(w->features, w->hidden));
  const Instance in = Make("llama-3.1-70b", "h200", 16);
  StatusOr<std::unique_ptr<Searcher>> oracle = MakeSearcher("oracle");
  const SearchResult best = (*oracle)->Search(*in.sim, *in.space, 1, 0, nullptr);
  ASSERT_TRUE(best.found);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    StatusOr<std::unique_ptr<Searcher>> rl = MakeSearcher("rl(warm=1)");
    const SearchResult r = (*rl)->Search(*in.sim, *in.space, 300, seed, nullptr);
    ASSERT_TRUE(r.found);
    EXPECT_GE(r.eval.tokens_per_s_per_gpu, 0.99 * best.eval.tokens_per_s_per_gpu) << "seed " << seed;
  }
}

}  // namespace
}  // namespace l2s
