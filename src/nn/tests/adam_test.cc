// Adam on hand-derivable cases, convergence on an ill-conditioned quadratic, global-norm
// clipping, and the cosine learning-rate schedule at hand-derived points.
#include "nn/adam.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace l2s::nn {
namespace {

std::vector<ParamRef> Refs(Vec& value, Vec& grad) {
  return {ParamRef{"x", value.data(), grad.data(), static_cast<std::size_t>(value.size())}};
}

TEST(Adam, FirstStepMovesEveryCoordinateByLr) {
  // At t = 1: m = (1-b1) g, v = (1-b2) g^2, so mhat = g, vhat = g^2 and the update is
  // lr * g / (|g| + eps): a step of ~lr against the sign of g, whatever |g| is.
  Vec x(3), g(3);
  x << 1.0, -2.0, 0.5;
  g << 4.0, -0.001, 250.0;
  StatusOr<Adam> adam = Adam::Create(Refs(x, g));
  ASSERT_TRUE(adam.ok());
  const double norm = adam->Step(0.1);
  EXPECT_NEAR(norm, std::sqrt(16.0 + 1e-6 + 62500.0), 1e-12);
  EXPECT_NEAR(x[0], 1.0 - 0.1 * 4.0 / (4.0 + 1e-8), 1e-15);
  EXPECT_NEAR(x[1], -2.0 + 0.1 * 0.001 / (0.001 + 1e-8), 1e-15);
  EXPECT_NEAR(x[2], 0.5 - 0.1 * 250.0 / (250.0 + 1e-8), 1e-15);
  EXPECT_EQ(adam->step_count(), 1);
}

TEST(Adam, SecondStepHandComputed) {
  // Constant gradient g: m_t/(1-b1^t) = g and v_t/(1-b2^t) = g^2 at every t, so each step is
  // lr * g / (|g| + eps) again.
  Vec x(1), g(1);
  x << 0.0;
  g << 2.0;
  StatusOr<Adam> adam = Adam::Create(Refs(x, g));
  ASSERT_TRUE(adam.ok());
  adam->Step(0.01);
  adam->Step(0.02);
  EXPECT_NEAR(x[0], -(0.01 + 0.02) * 2.0 / (2.0 + 1e-8), 1e-15);
}

TEST(Adam, ConvergesOnIllConditionedQuadratic) {
  // f(x) = 0.5 sum_i a_i (x_i - c_i)^2, curvatures spanning 1e4; minimum at c.
  Vec a(4), c(4), x(4), g(4);
  a << 1.0, 10.0, 100.0, 1e4;
  c << 3.0, -1.0, 0.25, 2.0;
  x.setZero();
  StatusOr<Adam> adam = Adam::Create(Refs(x, g));
  ASSERT_TRUE(adam.ok());
  constexpr int kSteps = 3000;
  for (int t = 0; t < kSteps; ++t) {
    g = a.cwiseProduct(x - c);
    adam->Step(CosineLr(0.05, 0.0, t, kSteps));
  }
  EXPECT_LT((x - c).cwiseAbs().maxCoeff(), 1e-3) << x.transpose();
}

TEST(Adam, ClipsByGlobalNorm) {
  // Two tensors with gradients (3) and (4): global norm 5. max_grad_norm 1 scales them by 1/5.
  Vec x1(1), g1(1), x2(1), g2(1);
  x1 << 0.0;
  x2 << 0.0;
  g1 << 3.0;
  g2 << 4.0;
  std::vector<ParamRef> refs = {{"a", x1.data(), g1.data(), 1}, {"b", x2.data(), g2.data(), 1}};
  AdamConfig cfg;
  cfg.max_grad_norm = 1.0;
  StatusOr<Adam> adam = Adam::Create(refs, cfg);
  ASSERT_TRUE(adam.ok());
  EXPECT_NEAR(adam->Step(0.1), 5.0, 1e-15);  // pre-clip norm
  EXPECT_NEAR(g1[0], 0.6, 1e-15);
  EXPECT_NEAR(g2[0], 0.8, 1e-15);
  // Below the threshold nothing changes.
  g1 << 0.3;
  g2 << 0.4;
  EXPECT_NEAR(adam->Step(0.1), 0.5, 1e-15);
  EXPECT_EQ(g1[0], 0.3);
}

TEST(Adam, ResetForgetsMoments) {
  Vec x(1), g(1);
  x << 0.0;
  g << 1.0;
  StatusOr<Adam> adam = Adam::Create(Refs(x, g));
  ASSERT_TRUE(adam.ok());
  adam->Step(0.1);
  g << -5.0;
  adam->Reset();
  EXPECT_EQ(adam->step_count(), 0);
  const double before = x[0];
  adam->Step(0.1);  // a fresh first step: exactly +lr * 5 / (5 + eps)
  EXPECT_NEAR(x[0] - before, 0.1 * 5.0 / (5.0 + 1e-8), 1e-15);
}

TEST(Adam, RejectsBadConfig) {
  Vec x(1), g(1);
  AdamConfig cfg;
  cfg.beta1 = 1.0;
  EXPECT_FALSE(Adam::Create(Refs(x, g), cfg).ok());
  cfg = {};
  cfg.eps = 0.0;
  EXPECT_FALSE(Adam::Create(Refs(x, g), cfg).ok());
}

TEST(CosineLr, HandDerivedPoints) {
  const double lr0 = 1e-3, lr_min = 1e-5;
  // t = 0: cos 0 = 1 -> lr0.
  EXPECT_NEAR(CosineLr(lr0, lr_min, 0, 100), lr0, 1e-18);
  // t = T/2: cos(pi/2) = 0 -> (lr0 + lr_min) / 2 = 5.05e-4.
  EXPECT_NEAR(CosineLr(lr0, lr_min, 50, 100), 5.05e-4, 1e-18);
  // t = T: cos(pi) = -1 -> lr_min.
  EXPECT_NEAR(CosineLr(lr0, lr_min, 100, 100), lr_min, 1e-18);
  // t = T/4: 1 + cos(pi/4) = 1 + sqrt(2)/2 -> 1e-5 + 0.5 * 9.9e-4 * 1.7071067811865475.
  EXPECT_NEAR(CosineLr(lr0, lr_min, 25, 100), 1e-5 + 0.5 * 9.9e-4 * 1.7071067811865475, 1e-18);
  // Clamped outside [0, T]; T <= 0 means constant lr0.
  EXPECT_EQ(CosineLr(lr0, lr_min, 150, 100), CosineLr(lr0, lr_min, 100, 100));
  EXPECT_EQ(CosineLr(lr0, lr_min, -3, 100), lr0);
  EXPECT_EQ(CosineLr(lr0, lr_min, 7, 0), lr0);
}

}  // namespace
}  // namespace l2s::nn
