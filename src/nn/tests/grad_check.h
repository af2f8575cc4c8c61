// Central-difference gradient checking for the nn tests (ggml test-grad0 style, in double).
//
// For a scalar function f of some parameters x, the numeric derivative is
//   n_i = (f(x + h e_i) - f(x - h e_i)) / (2 h)
// whose error is O(h^2 f''') (truncation) + O(eps_machine |f| / h) (rounding); with h = 1e-5 and
// O(1) values both are ~1e-10. The error metric per entry is
//   |a_i - n_i| / max(|a_i| + |n_i|, kAbsFloor)
// so gradients above 1e-3 are compared relatively and smaller ones absolutely (kAbsFloor =
// 1e-3): structurally-zero gradients (e.g. the attention key bias, which shifts every score of a
// softmax row equally) then measure rounding noise ~1e-10 / 1e-3 instead of noise / noise.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "nn/policy_model.h"
#include "nn/rng.h"
#include "nn/tensor.h"

namespace l2s::nn::gradcheck {

inline constexpr double kStep = 1e-5;
inline constexpr double kAbsFloor = 1e-3;

struct GradCheckResult {
  double max_err = 0.0;  // max over entries of the error metric above
  std::string worst;     // description of the worst entry
  int checked = 0;       // number of entries compared
};

// Checks `analytic` [n] against central differences of `f` with respect to x[0..n).
// `f` must read x through the pointer (it is perturbed in place and restored).
inline void CheckEntries(const std::function<double()>& f, double* x, const double* analytic,
                         std::size_t n, const std::string& name, GradCheckResult* result) {
  for (std::size_t i = 0; i < n; ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double fp = f();
    x[i] = saved - kStep;
    const double fm = f();
    x[i] = saved;
    const double numeric = (fp - fm) / (2.0 * kStep);
    const double err = std::abs(analytic[i] - numeric) /
                       std::max(std::abs(analytic[i]) + std::abs(numeric), kAbsFloor);
    ++result->checked;
    if (err > result->max_err) {
      result->max_err = err;
      result->worst = name + "[" + std::to_string(i) + "]: analytic " + std::to_string(analytic[i]) +
                      " numeric " + std::to_string(numeric);
    }
  }
}

// Checks every parameter in `params` whose analytic gradient has already been accumulated (after
// zeroing) by one backward pass of the same f.
inline void CheckParams(const std::function<double()>& f, const std::vector<ParamRef>& params,
                        GradCheckResult* result) {
  for (const ParamRef& p : params) {
    const std::vector<double> analytic(p.grad, p.grad + p.size);
    CheckEntries(f, p.value, analytic.data(), p.size, p.name, result);
  }
}

// Whole-network check of a policy: loss = logits(obs) . r, the analytic gradients of one
// Backward(r) against central differences of every parameter. Zeroes the gradients first.
inline GradCheckResult CheckPolicyModel(PolicyModel& net, const Mat& obs, const Vec& r) {
  const std::vector<ParamRef> params = net.Params();
  auto f = [&] {
    (void)net.Forward(obs);
    return net.logits().dot(r);
  };
  net.ZeroGrad();
  f();
  GradCheckResult res;
  if (!net.Backward(r).ok()) {
    res.max_err = 1e9;
    res.worst = "Backward failed";
    return res;
  }
  CheckParams(f, params, &res);
  return res;
}

// A matrix with entries uniform in [-scale, scale).
inline Mat RandomMat(Rng& rng, int rows, int cols, double scale = 1.0) {
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.Uniform(-scale, scale);
  return m;
}

// Sum of y ⊙ r: a scalar loss whose gradient w.r.t. y is exactly r.
inline double Project(const Mat& y, const Mat& r) { return (y.array() * r.array()).sum(); }

}  // namespace l2s::nn::gradcheck
