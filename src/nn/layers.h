// Elementary layers with hand-written backward passes: Linear, LayerNorm, ReLU, GELU, mean pooling
// and the residual add.
//
// Contract shared by every layer:
//  - Forward(x, &y) computes y from x and caches what Backward needs (a copy of x or of
//    intermediates). Output buffers are resized to fit; Eigen only reallocates when the element
//    count changes, so repeated calls with the same row count T do no heap allocation.
//  - Backward(dy, &dx) uses the cache of the most recent Forward, ACCUMULATES parameter gradients
//    (callers zero them between optimiser steps) and OVERWRITES dx with dL/dx. dx may be nullptr
//    when the input gradient is not needed (e.g. the first layer of a network).
//  - Shapes are checked with assertions only: these are internal building blocks whose shapes are
//    fixed by the owning network, which validates user input (see policy_net.h).
#pragma once

#include <string>
#include <vector>

#include "nn/rng.h"
#include "nn/tensor.h"

namespace l2s::nn {

// Read-only view of any row-major, inner-contiguous matrix (a Mat, a Map, a block of rows/cols).
using ConstMatRef = Eigen::Ref<const Mat>;

// y = x W^T + b, W [out, in], b [out].
class Linear {
 public:
  Linear() = default;
  Linear(int in_dim, int out_dim);

  // Glorot/Xavier uniform (Glorot & Bengio, AISTATS 2010): W ~ U(-a, a) with
  // a = gain * sqrt(6 / (in + out)), b = 0. Gradients are zeroed.
  void Init(Rng& rng, double gain = 1.0);

  void Forward(const ConstMatRef& x, Mat* y);  // x [T, in] -> y [T, out]
  void Backward(const ConstMatRef& dy, Mat* dx);  // dy [T, out] -> dx [T, in]; dW, db +=

  void CollectParams(const std::string& prefix, std::vector<ParamRef>* out);
  void ZeroGrad();
  int in_dim() const { return static_cast<int>(w_.cols()); }
  int out_dim() const { return static_cast<int>(w_.rows()); }

  Mat& weight() { return w_; }  // [out, in]
  Vec& bias() { return b_; }    // [out]

 private:
  Mat w_, dw_;  // [out, in]
  Vec b_, db_;  // [out]
  Mat x_;       // [T, in] cached input
};

// Per-row layer normalisation (Ba et al. 2016): y = (x - mean) / sqrt(var + eps) * g + b, with the
// biased variance over the d features of a row, g [d] initialised to 1 and b [d] to 0.
class LayerNorm {
 public:
  // eps = 1e-5 is PyTorch's nn.LayerNorm default.
  static constexpr double kEps = 1e-5;

  LayerNorm() = default;
  explicit LayerNorm(int dim);

  void Init();  // g = 1, b = 0, gradients zeroed.

  void Forward(const ConstMatRef& x, Mat* y);     // x [T, d] -> y [T, d]
  void Backward(const ConstMatRef& dy, Mat* dx);  // dy [T, d] -> dx [T, d]; dg, db +=

  void CollectParams(const std::string& prefix, std::vector<ParamRef>* out);
  void ZeroGrad();
  Vec& gain() { return g_; }
  Vec& bias() { return b_; }

 private:
  Vec g_, dg_;  // [d]
  Vec b_, db_;  // [d]
  Mat xhat_;    // [T, d] normalised input (x - mean) * rstd
  Vec rstd_;    // [T] 1 / sqrt(var + eps)
  Mat dxhat_;   // [T, d] scratch for Backward
};

// y = max(x, 0) elementwise. The derivative at exactly 0 is taken as 0.
class ReLU {
 public:
  void Forward(const ConstMatRef& x, Mat* y);
  void Backward(const ConstMatRef& dy, Mat* dx);

 private:
  Mat x_;  // [T, d]
};

// GELU, tanh approximation (Hendrycks & Gimpel 2016, eq. in sec. 2; GPT-2's "gelu_new"):
//   y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
//   dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
class GELU {
 public:
  void Forward(const ConstMatRef& x, Mat* y);
  void Backward(const ConstMatRef& dy, Mat* dx);

 private:
  Mat x_;  // [T, d]
};

// Mean over rows: x [T, d] -> y [1, d]; backward spreads dy / T to every row.
class MeanPool {
 public:
  void Forward(const ConstMatRef& x, Mat* y);
  void Backward(const ConstMatRef& dy, Mat* dx);

 private:
  int rows_ = 0;  // T of the last Forward
};

// Residual add y = a + b (its backward is the identity into both branches: da = db = dy).
void AddResidual(const ConstMatRef& a, const ConstMatRef& b, Mat* y);

}  // namespace l2s::nn
