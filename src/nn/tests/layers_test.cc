// Elementary layers: hand-computed forward values and central-difference gradient checks.
#include "nn/layers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "grad_check.h"

namespace l2s::nn {
namespace {

using gradcheck::CheckEntries;
using gradcheck::CheckParams;
using gradcheck::GradCheckResult;
using gradcheck::Project;
using gradcheck::RandomMat;

// ------------------------------------------------------------------------- hand-derived values

TEST(Linear, ForwardHandComputed) {
  Linear lin(2, 3);
  lin.weight() << 1, 2, 3, 4, 5, 6;  // [out=3, in=2]
  lin.bias() << 0.5, -1, 0;
  Mat x(1, 2);
  x << 1, -1;
  Mat y;
  lin.Forward(x, &y);
  // y_j = W_j0 * 1 + W_j1 * (-1) + b_j = (1-2+0.5, 3-4-1, 5-6+0)
  ASSERT_EQ(y.rows(), 1);
  ASSERT_EQ(y.cols(), 3);
  EXPECT_DOUBLE_EQ(y(0, 0), -0.5);
  EXPECT_DOUBLE_EQ(y(0, 1), -2.0);
  EXPECT_DOUBLE_EQ(y(0, 2), -1.0);
  // dy = [1, 0, 0]: dx = dy W = W row 0 = (1, 2); dW row 0 = x; db = dy.
  Mat dy(1, 3);
  dy << 1, 0, 0;
  Mat dx;
  lin.Backward(dy, &dx);
  EXPECT_DOUBLE_EQ(dx(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(dx(0, 1), 2.0);
  std::vector<ParamRef> params;
  lin.CollectParams("lin", &params);
  ASSERT_EQ(params.size(), 2u);
  EXPECT_DOUBLE_EQ(params[0].grad[0], 1.0);   // dW[0,0] = dy0 * x0
  EXPECT_DOUBLE_EQ(params[0].grad[1], -1.0);  // dW[0,1] = dy0 * x1
  EXPECT_DOUBLE_EQ(params[0].grad[2], 0.0);   // dW[1,0] = dy1 * x0
  EXPECT_DOUBLE_EQ(params[1].grad[0], 1.0);
  EXPECT_DOUBLE_EQ(params[1].grad[1], 0.0);
}

TEST(Linear, XavierInitBoundsAndDeterminism) {
  Rng rng1(7), rng2(7);
  Linear a(30, 10), b(30, 10);
  a.Init(rng1);
  b.Init(rng2);
  const double bound = std::sqrt(6.0 / 40.0);  // Glorot: sqrt(6 / (in + out))
  EXPECT_LE(a.weight().cwiseAbs().maxCoeff(), bound);
  EXPECT_GT(a.weight().cwiseAbs().maxCoeff(), 0.8 * bound);  // 300 draws reach the edge region
  EXPECT_TRUE(a.weight() == b.weight());
  EXPECT_TRUE(a.bias().isZero());
}

TEST(LayerNorm, ForwardHandComputed) {
  LayerNorm ln(3);
  Mat x(2, 3);
  x << 1, 2, 3,  //
      5, 5, 5;
  Mat y;
  ln.Forward(x, &y);
  // Row 0: mean 2, biased var (1 + 0 + 1) / 3 = 2/3, so y = (-1, 0, 1) / sqrt(2/3 + 1e-5).
  const double r = 1.0 / std::sqrt(2.0 / 3.0 + LayerNorm::kEps);
  EXPECT_NEAR(y(0, 0), -r, 1e-15);
  EXPECT_NEAR(y(0, 1), 0.0, 1e-15);
  EXPECT_NEAR(y(0, 2), r, 1e-15);
  EXPECT_NEAR(r, 1.2247356859083902, 1e-15);
  // Row 1 is constant: x - mean = 0 so y = bias = 0 (eps keeps it finite).
  EXPECT_EQ(y.row(1).cwiseAbs().maxCoeff(), 0.0);
}

TEST(ReLU, ForwardBackwardHandComputed) {
  ReLU relu;
  Mat x(1, 3);
  x << -1, 0, 2;
  Mat y, dx;
  relu.Forward(x, &y);
  EXPECT_EQ(y(0, 0), 0.0);
  EXPECT_EQ(y(0, 1), 0.0);
  EXPECT_EQ(y(0, 2), 2.0);
  Mat dy = Mat::Constant(1, 3, 3.0);
  relu.Backward(dy, &dx);
  EXPECT_EQ(dx(0, 0), 0.0);
  EXPECT_EQ(dx(0, 1), 0.0);  // documented convention at exactly 0
  EXPECT_EQ(dx(0, 2), 3.0);
}

TEST(GELU, ForwardHandComputed) {
  GELU gelu;
  Mat x(1, 4);
  x << 0.0, 1.0, -0.5, 30.0;
  Mat y;
  gelu.Forward(x, &y);
  EXPECT_EQ(y(0, 0), 0.0);
  // x = 1: 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.5 (1 + tanh(0.8335625...)).
  EXPECT_NEAR(y(0, 1), 0.8411919906082768, 1e-15);
  // x = -0.5: u = sqrt(2/pi)(-0.5 - 0.044715/8) = -0.4034103..., 0.5 * -0.5 * (1 + tanh u).
  EXPECT_NEAR(y(0, 2), -0.15428599017485606, 1e-15);
  EXPECT_DOUBLE_EQ(y(0, 3), 30.0);  // tanh saturates to 1
}

TEST(MeanPool, HandComputed) {
  MeanPool pool;
  Mat x(2, 2);
  x << 1, 2,  //
      3, 6;
  Mat y, dx;
  pool.Forward(x, &y);
  EXPECT_DOUBLE_EQ(y(0, 0), 2.0);
  EXPECT_DOUBLE_EQ(y(0, 1), 4.0);
  Mat dy(1, 2);
  dy << 1, -4;
  pool.Backward(dy, &dx);  // dy / T on every row
  ASSERT_EQ(dx.rows(), 2);
  EXPECT_DOUBLE_EQ(dx(0, 0), 0.5);
  EXPECT_DOUBLE_EQ(dx(1, 1), -2.0);
}

TEST(AddResidual, Sum) {
  Mat a = Mat::Constant(2, 3, 1.5), b = Mat::Constant(2, 3, -0.25), y;
  AddResidual(a, b, &y);
  EXPECT_TRUE((y.array() == 1.25).all());
}

// --------------------------------------------------------------------------- gradient checks
// Loss L = sum(layer(x) ⊙ R) with R random, so dL/dy = R.

// Linear is linear in x, W, b: central differences are exact up to rounding (~1e-10 relative).
constexpr double kTolLinear = 1e-7;
// LayerNorm / GELU / attention are smooth; truncation error O(h^2) = 1e-10 relative to O(1).
constexpr double kTolSmooth = 1e-6;

TEST(Linear, GradCheck) {
  for (int t_rows : {1, 3}) {
    Rng rng(11 + t_rows);
    Linear lin(5, 4);
    lin.Init(rng);
    lin.bias() = RandomMat(rng, 4, 1);
    Mat x = RandomMat(rng, t_rows, 5);
    const Mat r = RandomMat(rng, t_rows, 4);
    Mat y, dx;
    auto f = [&] {
      lin.Forward(x, &y);
      return Project(y, r);
    };
    std::vector<ParamRef> params;
    lin.CollectParams("lin", &params);
    ZeroGrad(params);
    f();
    lin.Backward(r, &dx);
    GradCheckResult res;
    CheckParams(f, params, &res);
    CheckEntries(f, x.data(), Mat(dx).data(), x.size(), "x", &res);
    EXPECT_EQ(res.checked, 4 * 5 + 4 + t_rows * 5);
    EXPECT_LT(res.max_err, kTolLinear) << res.worst;
  }
}

TEST(LayerNorm, GradCheck) {
  Rng rng(21);
  LayerNorm ln(6);
  ln.gain() = RandomMat(rng, 6, 1, 2.0);
  ln.bias() = RandomMat(rng, 6, 1);
  Mat x = RandomMat(rng, 3, 6, 3.0);
  const Mat r = RandomMat(rng, 3, 6);
  Mat y, dx;
  auto f = [&] {
    ln.Forward(x, &y);
    return Project(y, r);
  };
  std::vector<ParamRef> params;
  ln.CollectParams("ln", &params);
  ZeroGrad(params);
  f();
  ln.Backward(r, &dx);
  GradCheckResult res;
  CheckParams(f, params, &res);
  CheckEntries(f, x.data(), Mat(dx).data(), x.size(), "x", &res);
  EXPECT_LT(res.max_err, kTolSmooth) << res.worst;
}

TEST(ReLU, GradCheck) {
  Rng rng(31);
  Mat x = RandomMat(rng, 4, 5);
  // Keep every input at least 1e-2 from the kink so x +- h never crosses it.
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (std::abs(x.data()[i]) < 1e-2) x.data()[i] = 0.5;
  }
  const Mat r = RandomMat(rng, 4, 5);
  ReLU relu;
  Mat y, dx;
  auto f = [&] {
    relu.Forward(x, &y);
    return Project(y, r);
  };
  f();
  relu.Backward(r, &dx);
  GradCheckResult res;
  CheckEntries(f, x.data(), Mat(dx).data(), x.size(), "x", &res);
  EXPECT_LT(res.max_err, kTolLinear) << res.worst;  // piecewise linear away from 0
}

TEST(GELU, GradCheck) {
  Rng rng(41);
  Mat x = RandomMat(rng, 4, 6, 4.0);  // covers the curved region and both tails
  const Mat r = RandomMat(rng, 4, 6);
  GELU gelu;
  Mat y, dx;
  auto f = [&] {
    gelu.Forward(x, &y);
    return Project(y, r);
  };
  f();
  gelu.Backward(r, &dx);
  GradCheckResult res;
  CheckEntries(f, x.data(), Mat(dx).data(), x.size(), "x", &res);
  EXPECT_LT(res.max_err, kTolSmooth) << res.worst;
}

TEST(MeanPool, GradCheck) {
  Rng rng(51);
  for (int t_rows : {1, 2, 5}) {
    Mat x = RandomMat(rng, t_rows, 4);
    const Mat r = RandomMat(rng, 1, 4);
    MeanPool pool;
    Mat y, dx;
    auto f = [&] {
      pool.Forward(x, &y);
      return Project(y, r);
    };
    f();
    pool.Backward(r, &dx);
    GradCheckResult res;
    CheckEntries(f, x.data(), Mat(dx).data(), x.size(), "x", &res);
    EXPECT_LT(res.max_err, kTolLinear) << res.worst;
  }
}

TEST(Linear, GradientsAccumulateAcrossBackwardCalls) {
  Rng rng(61);
  Linear lin(3, 2);
  lin.Init(rng);
  const Mat x = RandomMat(rng, 2, 3);
  const Mat dy = RandomMat(rng, 2, 2);
  Mat y;
  std::vector<ParamRef> params;
  lin.CollectParams("lin", &params);
  ZeroGrad(params);
  lin.Forward(x, &y);
  lin.Backward(dy, nullptr);
  const std::vector<double> once(params[0].grad, params[0].grad + params[0].size);
  lin.Backward(dy, nullptr);
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_DOUBLE_EQ(params[0].grad[i], 2.0 * once[i]);
}

}  // namespace
}  // namespace l2s::nn
