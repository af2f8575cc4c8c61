#include "nn/layers.h"

#include <cassert>
#include <cmath>

namespace l2s::nn {

// ---------------------------------------------------------------------------------------- Linear

namespace {
// Up to this many rows, x W^T and dy W are computed one row at a time (matrix-vector products):
// Eigen's GEMM repacks the whole weight matrix on every call, which dominates for the skinny
// [T <= ~8, d] activations of the policy net. Measured on the dev machine (SSE2 build, d = 256,
// out = 768): T = 3 forward 54 us row-wise vs 101 us GEMM, dx 82 vs 138 us; the two break even
// around T = 8. Only speed depends on it: both paths compute the same sums (rounding may differ).
constexpr Eigen::Index kGemvMaxRows = 4;
}  // namespace

Linear::Linear(int in_dim, int out_dim)
    : w_(Mat::Zero(out_dim, in_dim)),
      dw_(Mat::Zero(out_dim, in_dim)),
      b_(Vec::Zero(out_dim)),
      db_(Vec::Zero(out_dim)) {}

void Linear::Init(Rng& rng, double gain) {
  const double a = gain * std::sqrt(6.0 / static_cast<double>(w_.rows() + w_.cols()));
  for (Eigen::Index i = 0; i < w_.size(); ++i) w_.data()[i] = rng.Uniform(-a, a);
  b_.setZero();
  dw_.setZero();
  db_.setZero();
}

void Linear::Forward(const ConstMatRef& x, Mat* y) {
  assert(x.cols() == w_.cols());
  x_ = x;                                        // [T, in]
  y->resize(x.rows(), w_.rows());                // [T, out]
  if (x.rows() <= kGemvMaxRows) {
    for (Eigen::Index t = 0; t < x.rows(); ++t) y->row(t).noalias() = x_.row(t) * w_.transpose();
  } else {
    y->noalias() = x_ * w_.transpose();
  }
  y->rowwise() += b_.transpose();
}

void Linear::Backward(const ConstMatRef& dy, Mat* dx) {
  assert(dy.rows() == x_.rows() && dy.cols() == w_.rows());
  dw_.noalias() += dy.transpose() * x_;          // [out, in]
  db_.noalias() += dy.colwise().sum().transpose();  // [out]
  if (dx != nullptr) {
    dx->resize(dy.rows(), w_.cols());            // [T, in]
    if (dy.rows() <= kGemvMaxRows) {
      for (Eigen::Index t = 0; t < dy.rows(); ++t) dx->row(t).noalias() = dy.row(t) * w_;
    } else {
      dx->noalias() = dy * w_;
    }
  }
}

void Linear::CollectParams(const std::string& prefix, std::vector<ParamRef>* out) {
  out->push_back({prefix + ".weight", w_.data(), dw_.data(), static_cast<std::size_t>(w_.size())});
  out->push_back({prefix + ".bias", b_.data(), db_.data(), static_cast<std::size_t>(b_.size())});
}

void Linear::ZeroGrad() {
  dw_.setZero();
  db_.setZero();
}

// ------------------------------------------------------------------------------------- LayerNorm

LayerNorm::LayerNorm(int dim)
    : g_(Vec::Ones(dim)), dg_(Vec::Zero(dim)), b_(Vec::Zero(dim)), db_(Vec::Zero(dim)) {}

void LayerNorm::Init() {
  g_.setOnes();
  b_.setZero();
  dg_.setZero();
  db_.setZero();
}

void LayerNorm::Forward(const ConstMatRef& x, Mat* y) {
  const Eigen::Index t_rows = x.rows();
  const Eigen::Index d = x.cols();
  assert(d == g_.size());
  xhat_.resize(t_rows, d);
  rstd_.resize(t_rows);
  y->resize(t_rows, d);
  const double inv_d = 1.0 / static_cast<double>(d);
  for (Eigen::Index t = 0; t < t_rows; ++t) {
    const double mean = x.row(t).sum() * inv_d;
    xhat_.row(t) = x.row(t).array() - mean;
    const double var = xhat_.row(t).squaredNorm() * inv_d;  // biased variance
    const double rstd = 1.0 / std::sqrt(var + kEps);
    rstd_[t] = rstd;
    xhat_.row(t) *= rstd;
    y->row(t) = xhat_.row(t).cwiseProduct(g_.transpose()) + b_.transpose();
  }
}

// With xhat = (x - mean) * rstd and dxhat = dy * g:
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))   (per row)
void LayerNorm::Backward(const ConstMatRef& dy, Mat* dx) {
  const Eigen::Index t_rows = xhat_.rows();
  const Eigen::Index d = xhat_.cols();
  assert(dy.rows() == t_rows && dy.cols() == d);
  dg_.noalias() += (dy.array() * xhat_.array()).matrix().colwise().sum().transpose();
  db_.noalias() += dy.colwise().sum().transpose();
  if (dx == nullptr) return;
  dxhat_.resize(t_rows, d);
  dx->resize(t_rows, d);
  const double inv_d = 1.0 / static_cast<double>(d);
  for (Eigen::Index t = 0; t < t_rows; ++t) {
    dxhat_.row(t) = dy.row(t).cwiseProduct(g_.transpose());
    const double mean_dxhat = dxhat_.row(t).sum() * inv_d;
    const double mean_dxhat_xhat = dxhat_.row(t).dot(xhat_.row(t)) * inv_d;
    dx->row(t) = rstd_[t] * (dxhat_.row(t).array() - mean_dxhat -
                             xhat_.row(t).array() * mean_dxhat_xhat);
  }
}

void LayerNorm::CollectParams(const std::string& prefix, std::vector<ParamRef>* out) {
  out->push_back({prefix + ".gain", g_.data(), dg_.data(), static_cast<std::size_t>(g_.size())});
  out->push_back({prefix + ".bias", b_.data(), db_.data(), static_cast<std::size_t>(b_.size())});
}

void LayerNorm::ZeroGrad() {
  dg_.setZero();
  db_.setZero();
}

// ------------------------------------------------------------------------------------------ ReLU

void ReLU::Forward(const ConstMatRef& x, Mat* y) {
  x_ = x;
  y->resize(x.rows(), x.cols());
  y->array() = x_.array().max(0.0);
}

void ReLU::Backward(const ConstMatRef& dy, Mat* dx) {
  assert(dy.rows() == x_.rows() && dy.cols() == x_.cols());
  dx->resize(dy.rows(), dy.cols());
  dx->array() = (x_.array() > 0.0).select(dy.array(), 0.0);
}

// ------------------------------------------------------------------------------------------ GELU

namespace {
// sqrt(2 / pi) and the cubic coefficient of the tanh approximation (Hendrycks & Gimpel 2016).
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
}  // namespace

void GELU::Forward(const ConstMatRef& x, Mat* y) {
  x_ = x;
  y->resize(x.rows(), x.cols());
  const double* xs = x_.data();
  double* ys = y->data();
  for (Eigen::Index i = 0; i < x_.size(); ++i) {
    const double v = xs[i];
    const double u = kSqrt2OverPi * (v + kGeluCubic * v * v * v);
    ys[i] = 0.5 * v * (1.0 + std::tanh(u));
  }
}

void GELU::Backward(const ConstMatRef& dy, Mat* dx) {
  assert(dy.rows() == x_.rows() && dy.cols() == x_.cols());
  dx->resize(dy.rows(), dy.cols());
  const double* xs = x_.data();
  double* dxs = dx->data();
  for (Eigen::Index r = 0; r < dy.rows(); ++r) {
    for (Eigen::Index c = 0; c < dy.cols(); ++c) {
      const Eigen::Index i = r * dy.cols() + c;
      const double v = xs[i];
      const double th = std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
      const double du_dx = kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * v * v);
      const double local = 0.5 * (1.0 + th) + 0.5 * v * (1.0 - th * th) * du_dx;
      dxs[i] = dy(r, c) * local;
    }
  }
}

// ------------------------------------------------------------------------------------- MeanPool

void MeanPool::Forward(const ConstMatRef& x, Mat* y) {
  assert(x.rows() > 0);
  rows_ = static_cast<int>(x.rows());
  y->resize(1, x.cols());
  y->noalias() = x.colwise().sum() / static_cast<double>(rows_);
}

void MeanPool::Backward(const ConstMatRef& dy, Mat* dx) {
  assert(dy.rows() == 1);
  dx->resize(rows_, dy.cols());
  const double inv_t = 1.0 / static_cast<double>(rows_);
  // Row by row: `dx->rowwise() = expr` would evaluate expr into a heap temporary.
  for (int t = 0; t < rows_; ++t) dx->row(t) = dy.row(0) * inv_t;
}

// ----------------------------------------------------------------------------------- AddResidual

void AddResidual(const ConstMatRef& a, const ConstMatRef& b, Mat* y) {
  assert(a.rows() == b.rows() && a.cols() == b.cols());
  y->resize(a.rows(), a.cols());
  y->noalias() = a + b;
}

}  // namespace l2s::nn
