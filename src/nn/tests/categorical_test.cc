// Per-head masked softmax and the categorical utilities: hand-derived values, exact zeros under
// masks, sampling by inverse CDF, and gradient checks of log-prob and entropy w.r.t. the logits.
#include "nn/categorical.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "grad_check.h"

namespace l2s::nn {
namespace {

using gradcheck::CheckEntries;
using gradcheck::GradCheckResult;

HeadLayout Layout(std::vector<int> sizes) {
  StatusOr<HeadLayout> l = HeadLayout::Make(std::move(sizes));
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return *l;
}

TEST(HeadLayout, OffsetsAndValidation) {
  const HeadLayout l = Layout({2, 3, 1});
  EXPECT_EQ(l.num_heads(), 3);
  EXPECT_EQ(l.total(), 6);
  EXPECT_EQ(l.offset(0), 0);
  EXPECT_EQ(l.offset(1), 2);
  EXPECT_EQ(l.offset(2), 5);
  EXPECT_FALSE(HeadLayout::Make({}).ok());
  EXPECT_FALSE(HeadLayout::Make({2, 0}).ok());
  EXPECT_FALSE(HeadLayout::Make({-1}).ok());
}

TEST(MultiCategorical, HandComputedTwoHeads) {
  // Head 0: logits (0, ln 3) -> p = (1/4, 3/4). Head 1: (0, 0, 0) with option 1 masked ->
  // p = (1/2, 0, 1/2).
  const HeadLayout l = Layout({2, 3});
  const std::vector<double> logits = {0.0, std::log(3.0), 0.0, 0.0, 0.0};
  const std::vector<bool> mask = {true, true, true, false, true};
  MultiCategorical d;
  ASSERT_TRUE(d.Set(l, logits, mask).ok());
  EXPECT_NEAR(d.probs()[0], 0.25, 1e-15);
  EXPECT_NEAR(d.probs()[1], 0.75, 1e-15);
  EXPECT_NEAR(d.probs()[2], 0.5, 1e-15);
  EXPECT_EQ(d.probs()[3], 0.0);  // exactly zero
  EXPECT_EQ(d.log_probs()[3], -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(d.probs()[4], 0.5, 1e-15);
  // Entropies: H0 = -(1/4 ln 1/4 + 3/4 ln 3/4) = ln 4 - (3/4) ln 3; H1 = ln 2.
  EXPECT_NEAR(d.Entropy(0), std::log(4.0) - 0.75 * std::log(3.0), 1e-15);
  EXPECT_NEAR(d.Entropy(1), std::log(2.0), 1e-15);
  EXPECT_NEAR(d.TotalEntropy(), d.Entropy(0) + d.Entropy(1), 1e-15);
  // log p(1, 2) = ln 3/4 + ln 1/2.
  const std::vector<int> chosen = {1, 2};
  StatusOr<double> lp = d.LogProb(chosen);
  ASSERT_TRUE(lp.ok());
  EXPECT_NEAR(*lp, std::log(0.75) + std::log(0.5), 1e-15);
  // d log p / d logits = onehot - p per head: (-1/4, 1/4, -1/2, 0, 1/2).
  std::vector<double> g(5, 0.0);
  d.AddLogProbGrad(chosen, 1.0, g);
  EXPECT_NEAR(g[0], -0.25, 1e-15);
  EXPECT_NEAR(g[1], 0.25, 1e-15);
  EXPECT_NEAR(g[2], -0.5, 1e-15);
  EXPECT_EQ(g[3], 0.0);
  EXPECT_NEAR(g[4], 0.5, 1e-15);
  EXPECT_EQ(d.Argmax(0), 1);
  EXPECT_EQ(d.Argmax(1), 0);  // tie between 0 and 2 -> lowest index
}

TEST(MultiCategorical, MaskedOptionsHaveExactlyZeroProbabilityEvenWithHugeLogits) {
  const HeadLayout l = Layout({4});
  const std::vector<double> logits = {1e6, -3.0, 2.0, 700.0};
  const std::vector<bool> mask = {false, true, true, false};
  MultiCategorical d;
  ASSERT_TRUE(d.Set(l, logits, mask).ok());
  EXPECT_EQ(d.probs()[0], 0.0);
  EXPECT_EQ(d.probs()[3], 0.0);
  EXPECT_NEAR(d.probs()[1] + d.probs()[2], 1.0, 1e-15);
  for (double u = 0.0; u < 1.0; u += 1.0 / 64) {
    const int s = d.Sample(0, u);
    EXPECT_TRUE(s == 1 || s == 2) << u;
  }
  EXPECT_EQ(d.Sample(0, std::nextafter(1.0, 0.0)), 2);  // the last allowed option
  const std::vector<int> masked_choice = {0};
  EXPECT_FALSE(d.LogProb(masked_choice).ok());
}

TEST(MultiCategorical, AllMaskedHeadIsAnError) {
  const HeadLayout l = Layout({2, 2});
  const std::vector<double> logits = {0, 0, 0, 0};
  MultiCategorical d;
  const Status s = d.Set(l, logits, {true, true, false, false});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(d.Set(l, logits, {true, true, true}).ok());  // wrong mask size
  EXPECT_FALSE(d.Set(l, std::vector<double>{0, 0, 0}, {}).ok());  // wrong logit count
  EXPECT_TRUE(d.Set(l, logits, {}).ok());  // empty mask = all allowed
}

TEST(MultiCategorical, SampleIsInverseCdf) {
  // p = (0.2, 0.3, 0.5): u in [0, .2) -> 0, [.2, .5) -> 1, [.5, 1) -> 2.
  const HeadLayout l = Layout({3});
  const std::vector<double> logits = {std::log(0.2), std::log(0.3), std::log(0.5)};
  MultiCategorical d;
  ASSERT_TRUE(d.Set(l, logits, {}).ok());
  EXPECT_EQ(d.Sample(0, 0.0), 0);
  EXPECT_EQ(d.Sample(0, 0.19), 0);
  EXPECT_EQ(d.Sample(0, 0.21), 1);
  EXPECT_EQ(d.Sample(0, 0.49), 1);
  EXPECT_EQ(d.Sample(0, 0.51), 2);
  EXPECT_EQ(d.Sample(0, 0.999999), 2);
}

TEST(MultiCategorical, SampleFrequenciesMatchProbabilities) {
  const HeadLayout l = Layout({5});
  const std::vector<double> logits = {0.3, -1.0, 2.0, 0.0, 1.0};
  const std::vector<bool> mask = {true, true, true, false, true};
  MultiCategorical d;
  ASSERT_TRUE(d.Set(l, logits, mask).ok());
  Rng rng(5);
  constexpr int kDraws = 20000;
  std::vector<int> counts(5, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[d.Sample(0, rng.Uniform())];
  EXPECT_EQ(counts[3], 0);
  for (int j = 0; j < 5; ++j) {
    // Binomial standard deviation sqrt(p(1-p)/n) <= 0.0036; 5 sigma bound.
    EXPECT_NEAR(counts[j] / static_cast<double>(kDraws), d.probs()[j], 0.018) << j;
  }
}

// Gradient checks w.r.t. the logits, with random masks (every head keeps >= 1 option).
// Smooth functions in double: tolerance 1e-6 relative (observed ~1e-9).
constexpr double kTolCategorical = 1e-6;

TEST(MultiCategorical, LogProbAndEntropyGradCheckRandomMasks) {
  Rng rng(9);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<int> sizes = {1 + static_cast<int>(rng.Uniform() * 5),
                                    1 + static_cast<int>(rng.Uniform() * 5),
                                    1 + static_cast<int>(rng.Uniform() * 5)};
    const HeadLayout l = Layout(sizes);
    std::vector<double> logits(l.total());
    for (double& v : logits) v = rng.Uniform(-3.0, 3.0);
    std::vector<bool> mask(l.total());
    std::vector<int> chosen(l.num_heads());
    for (int h = 0; h < l.num_heads(); ++h) {
      int allowed = 0;
      for (int j = 0; j < l.size(h); ++j) {
        mask[l.offset(h) + j] = rng.Uniform() < 0.7;
        allowed += mask[l.offset(h) + j];
      }
      if (allowed == 0) mask[l.offset(h) + l.size(h) - 1] = true;
      do {
        chosen[h] = static_cast<int>(rng.Uniform() * l.size(h));
      } while (!mask[l.offset(h) + chosen[h]]);
    }
    MultiCategorical d;
    ASSERT_TRUE(d.Set(l, logits, mask).ok());
    for (int h = 0; h < l.num_heads(); ++h) {
      double sum = 0.0;
      for (int j = 0; j < l.size(h); ++j) {
        sum += d.probs()[l.offset(h) + j];
        if (!mask[l.offset(h) + j]) {
          EXPECT_EQ(d.probs()[l.offset(h) + j], 0.0);
        }
      }
      EXPECT_NEAR(sum, 1.0, 1e-14);
    }
    // f1 = 0.7 * log p(chosen) + (-1.3) * H: checks both gradients and their accumulation.
    std::vector<double> analytic(l.total(), 0.0);
    d.AddLogProbGrad(chosen, 0.7, analytic);
    d.AddEntropyGrad(-1.3, analytic);
    auto f = [&] {
      MultiCategorical e;
      EXPECT_TRUE(e.Set(l, logits, mask).ok());
      return 0.7 * *e.LogProb(chosen) - 1.3 * e.TotalEntropy();
    };
    GradCheckResult res;
    CheckEntries(f, logits.data(), analytic.data(), logits.size(), "logits", &res);
    EXPECT_LT(res.max_err, kTolCategorical) << res.worst;
    for (int i = 0; i < l.total(); ++i) {
      if (!mask[i]) {
        EXPECT_EQ(analytic[i], 0.0);
      }
    }
  }
}

TEST(MaskedSoftmax, MatchesMultiCategoricalAndRejectsNonFinite) {
  const HeadLayout l = Layout({3, 2});
  std::vector<double> logits = {0.5, -1.0, 2.0, 1.0, 3.0};
  const std::vector<bool> mask = {true, false, true, true, true};
  std::vector<double> p(5);
  ASSERT_TRUE(MaskedSoftmax(l, logits, mask, p).ok());
  MultiCategorical d;
  ASSERT_TRUE(d.Set(l, logits, mask).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p[i], d.probs()[i]);
  EXPECT_EQ(p[1], 0.0);
  EXPECT_NEAR(p[0] + p[2], 1.0, 1e-15);
  logits[1] = std::numeric_limits<double>::quiet_NaN();  // masked: ignored
  EXPECT_TRUE(MaskedSoftmax(l, logits, mask, p).ok());
  logits[3] = std::numeric_limits<double>::infinity();  // allowed: an error
  EXPECT_FALSE(MaskedSoftmax(l, logits, mask, p).ok());
  logits[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(d.Set(l, logits, mask).ok());
}

TEST(MaskedLogSoftmax, ShiftInvariantPerHead) {
  // Adding a constant to one head's logits leaves every log-probability unchanged.
  const HeadLayout l = Layout({3, 2});
  std::vector<double> logits = {0.1, -0.4, 2.0, 1.0, 3.0};
  std::vector<double> a(5), b(5);
  ASSERT_TRUE(MaskedLogSoftmax(l, logits, {}, a).ok());
  for (int i = 0; i < 3; ++i) logits[i] += 500.0;
  ASSERT_TRUE(MaskedLogSoftmax(l, logits, {}, b).ok());
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(a[i], b[i], 1e-12);
}

}  // namespace
}  // namespace l2s::nn
