// OptionScorer: config validation, whole-network gradient check by central differences, the
// dynamic features read from the observation, save/load round trip of the weights, restarts going
// back to the initial (pretrained) weights, and one weight vector serving problems of different
// sizes.
#include "nn/option_scorer.h"

#include <gtest/gtest.h>

#include "grad_check.h"

namespace l2s::nn {
namespace {

using gradcheck::GradCheckResult;
using gradcheck::RandomMat;

// Heads of 3, 2 and 4 options (K = 9), F = 4 fixed features; heads 0 and 2 ordered.
OptionScorerConfig SmallConfig(std::uint64_t seed = 1, int k = 9) {
  OptionScorerConfig c;
  Rng rng(seed + 100);
  c.features = RandomMat(rng, k, 4);
  c.head_sizes = k == 9 ? std::vector<int>{3, 2, 4} : std::vector<int>{k};
  c.ordinal = k == 9 ? std::vector<bool>{true, false, true} : std::vector<bool>{true};
  c.hidden = 6;
  c.seed = seed;
  return c;
}

OptionScorer Make(const OptionScorerConfig& c) {
  StatusOr<OptionScorer> net = OptionScorer::Create(c);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return std::move(net).value();
}

// An observation of `rows` elites over the heads {3, 2, 4}: one-hot per head plus a value.
Mat EliteObs(const std::vector<std::vector<int>>& elites) {
  Mat obs = Mat::Zero(static_cast<Eigen::Index>(std::max<size_t>(1, elites.size())), 10);
  const int offsets[3] = {0, 3, 5};
  for (size_t r = 0; r < elites.size(); ++r) {
    for (int h = 0; h < 3; ++h) obs(static_cast<Eigen::Index>(r), offsets[h] + elites[r][h]) = 1;
    obs(static_cast<Eigen::Index>(r), 9) = 1.0 - 0.1 * static_cast<double>(r);
  }
  return obs;
}

TEST(OptionScorer, RejectsBadConfigs) {
  OptionScorerConfig c = SmallConfig();
  c.features = Mat::Zero(8, 4);  // K = 9 rows expected
  EXPECT_FALSE(OptionScorer::Create(c).ok());
  c = SmallConfig();
  c.ordinal = {true};
  EXPECT_FALSE(OptionScorer::Create(c).ok());
  c = SmallConfig();
  c.hidden = 0;
  EXPECT_FALSE(OptionScorer::Create(c).ok());
  c = SmallConfig();
  c.initial = std::vector<double>(3, 0.0);
  EXPECT_FALSE(OptionScorer::Create(c).ok());
}

TEST(OptionScorer, ParameterCountAndShapes) {
  OptionScorer net = Make(SmallConfig());
  // l1: (4 + 5) * 6 + 6, l2: 6 * 6 + 6, l3: 6 + 1.
  EXPECT_EQ(CountParams(net.Params()), static_cast<size_t>(9 * 6 + 6 + 36 + 6 + 6 + 1));
  EXPECT_EQ(OptionScorer::NumWeights(4, 6), 9 * 6 + 6 + 36 + 6 + 6 + 1);
  EXPECT_FALSE(net.Backward(Vec::Zero(9)).ok());      // no Forward yet
  EXPECT_FALSE(net.Forward(Mat::Zero(2, 9)).ok());    // K + 1 = 10 columns expected
  ASSERT_TRUE(net.Forward(Mat::Zero(1, 10)).ok());
  EXPECT_EQ(net.logits().size(), 9);
  EXPECT_FALSE(net.Backward(Vec::Zero(8)).ok());
  EXPECT_TRUE(net.Backward(Vec::Zero(9)).ok());
}

// Whole-network check: every parameter, loss = logits . r, with and without elites (the dynamic
// features on and off). Tolerance as PolicyNet's (1e-5 relative; observed ~1e-9).
TEST(OptionScorer, GradCheckAllParams) {
  for (int case_ = 0; case_ < 2; ++case_) {
    OptionScorer net = Make(SmallConfig(17));
    Rng rng(31 + case_);
    std::vector<ParamRef> params = net.Params();
    for (const ParamRef& p : params)
      for (std::size_t i = 0; i < p.size; ++i) p.value[i] += rng.Uniform(-0.3, 0.3);
    const Mat obs = case_ == 0 ? EliteObs({}) : EliteObs({{2, 0, 1}, {0, 1, 3}, {2, 1, 1}});
    const Vec r = RandomMat(rng, 9, 1);
    const GradCheckResult res = gradcheck::CheckPolicyModel(net, obs, r);
    EXPECT_EQ(static_cast<std::size_t>(res.checked), CountParams(params));
    EXPECT_LT(res.max_err, 1e-5) << "case " << case_ << " " << res.worst;
  }
}

// The dynamic features change the logits only through the elites: no elite and an elite give
// different logits; the order of the elite rows after the best does not matter (share is a mean).
TEST(OptionScorer, DynamicFeaturesFromTheObservation) {
  OptionScorer net = Make(SmallConfig(3));
  std::vector<ParamRef> params = net.Params();
  Rng rng(5);
  for (const ParamRef& p : params)
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] += rng.Uniform(-0.5, 0.5);
  ASSERT_TRUE(net.Forward(EliteObs({})).ok());
  const Vec none = net.logits();
  ASSERT_TRUE(net.Forward(EliteObs({{2, 0, 1}, {0, 1, 3}, {1, 1, 2}})).ok());
  const Vec a = net.logits();
  ASSERT_TRUE(net.Forward(EliteObs({{2, 0, 1}, {1, 1, 2}, {0, 1, 3}})).ok());
  const Vec b = net.logits();
  EXPECT_GT((a - none).norm(), 1e-6);
  EXPECT_LT((a - b).norm(), 1e-12);
}

TEST(OptionScorer, WeightsRoundTripThroughText) {
  OptionScorer net = Make(SmallConfig(8));
  std::vector<ParamRef> params = net.Params();
  Rng rng(9);
  for (const ParamRef& p : params)
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] = rng.Uniform(-1, 1) * 1e-3 / 7.0;
  const ScorerWeights w = net.Weights();
  const std::string text = ScorerWeightsToText(w);
  StatusOr<ScorerWeights> back = ScorerWeightsFromText(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->features, 4);
  EXPECT_EQ(back->hidden, 6);
  EXPECT_EQ(back->values, w.values);  // bitwise: %.17g round-trips doubles
  // A second network loading them computes the same logits.
  OptionScorer other = Make(SmallConfig(8));
  ASSERT_TRUE(other.SetWeights(*back).ok());
  const Mat obs = EliteObs({{1, 0, 2}});
  ASSERT_TRUE(net.Forward(obs).ok());
  ASSERT_TRUE(other.Forward(obs).ok());
  EXPECT_TRUE(net.logits() == other.logits());
  // Malformed text is an error, not a silent partial load.
  EXPECT_FALSE(ScorerWeightsFromText("hello").ok());
  EXPECT_FALSE(ScorerWeightsFromText(text.substr(0, text.size() / 2)).ok());
  EXPECT_FALSE(ScorerWeightsFromText(text + "1.0\n").ok());
  std::string bad = text;
  bad.replace(bad.rfind('\n', bad.size() - 2) + 1, 3, "abc");
  EXPECT_FALSE(ScorerWeightsFromText(bad).ok());
  // Weights of another shape do not load.
  ScorerWeights wrong = w;
  wrong.hidden = 5;
  EXPECT_FALSE(other.SetWeights(wrong).ok());
}

// With initial weights, Reinitialize goes back to them whatever the seed; without (or after
// ClearInitial), it draws from the seed.
TEST(OptionScorer, ReinitializeReturnsToTheInitialWeights) {
  OptionScorer trained = Make(SmallConfig(11));
  for (const ParamRef& p : trained.Params())
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] += 0.25;
  OptionScorerConfig c = SmallConfig(12);
  c.initial = trained.Weights().values;
  OptionScorer warm = Make(c);
  EXPECT_EQ(warm.Weights().values, c.initial);
  for (const ParamRef& p : warm.Params())
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] -= 1.0;
  warm.Reinitialize(777);
  EXPECT_EQ(warm.Weights().values, c.initial);
  // After ClearInitial (the searcher's restarts), Reinitialize draws from its seed.
  warm.ClearInitial();
  warm.Reinitialize(12);
  EXPECT_EQ(warm.Weights().values, Make(SmallConfig(12)).Weights().values);
  OptionScorer cold_a = Make(SmallConfig(13));
  OptionScorer cold_b = Make(SmallConfig(14));
  EXPECT_NE(cold_a.Weights().values, cold_b.Weights().values);
  cold_b.Reinitialize(13);
  EXPECT_EQ(cold_a.Weights().values, cold_b.Weights().values);
}

// One weight vector scores problems with different head sizes (the point of the design).
TEST(OptionScorer, OneWeightVectorServesDifferentHeadSizes) {
  OptionScorer small = Make(SmallConfig(21));
  OptionScorerConfig c = SmallConfig(21, 5);
  c.initial = small.Weights().values;
  OptionScorer other = Make(c);
  ASSERT_TRUE(other.Forward(Mat::Zero(1, 6)).ok());
  EXPECT_EQ(other.logits().size(), 5);
  // A row with the same fixed features and the same dynamic features gets the same logit.
  OptionScorerConfig c2 = SmallConfig(21);
  c2.initial = small.Weights().values;
  c2.features.row(4) = c.features.row(0);  // head 1's option 1 (categorical): dynamic all 0
  OptionScorer same = Make(c2);
  ASSERT_TRUE(same.Forward(Mat::Zero(1, 10)).ok());
  EXPECT_DOUBLE_EQ(same.logits()[4], other.logits()[0]);
}

}  // namespace
}  // namespace l2s::nn
