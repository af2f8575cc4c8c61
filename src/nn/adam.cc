#include "nn/adam.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace l2s::nn {

StatusOr<Adam> Adam::Create(std::vector<ParamRef> params, AdamConfig config) {
  if (!(config.beta1 >= 0.0 && config.beta1 < 1.0) || !(config.beta2 >= 0.0 && config.beta2 < 1.0)) {
    return Status::InvalidArgument("Adam: beta1 and beta2 must lie in [0, 1)");
  }
  if (!(config.eps > 0.0)) return Status::InvalidArgument("Adam: eps must be > 0");
  Adam adam;
  adam.config_ = config;
  adam.m_.reserve(params.size());
  adam.v_.reserve(params.size());
  for (const ParamRef& p : params) {
    adam.m_.push_back(Vec::Zero(static_cast<Eigen::Index>(p.size)));
    adam.v_.push_back(Vec::Zero(static_cast<Eigen::Index>(p.size)));
  }
  adam.params_ = std::move(params);
  return adam;
}

double Adam::Step(double lr) {
  // With clipping on, the norm needs its own pass before the update; without, it is accumulated
  // inside the update loop (one pass over the gradients instead of two).
  const bool clipping = config_.max_grad_norm > 0.0;
  double norm = clipping ? GlobalGradNorm(params_) : 0.0;
  double sum_sq = 0.0;
  double clip = 1.0;
  if (clipping && norm > config_.max_grad_norm) clip = config_.max_grad_norm / norm;
  ++t_;
  const double b1 = config_.beta1;
  const double b2 = config_.beta2;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(t_));  // bias corrections
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(t_));
  const double step = lr / bc1;
  const double inv_sqrt_bc2 = 1.0 / std::sqrt(bc2);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto n = static_cast<Eigen::Index>(params_[i].size);
    Eigen::Map<Vec> g(params_[i].grad, n);
    Eigen::Map<Vec> p(params_[i].value, n);
    if (clip != 1.0) g *= clip;
    if (!clipping) sum_sq += g.squaredNorm();
    m_[i].array() = b1 * m_[i].array() + (1.0 - b1) * g.array();
    v_[i].array() = b2 * v_[i].array() + (1.0 - b2) * g.array().square();
    // lr * mhat / (sqrt(vhat) + eps) with mhat = m / bc1, vhat = v / bc2.
    p.array() -= step * m_[i].array() / (v_[i].array().sqrt() * inv_sqrt_bc2 + config_.eps);
  }
  return clipping ? norm : std::sqrt(sum_sq);
}

void Adam::Reset() {
  for (Vec& m : m_) m.setZero();
  for (Vec& v : v_) v.setZero();
  t_ = 0;
}

double CosineLr(double lr0, double lr_min, std::int64_t t, std::int64_t total_steps) {
  if (total_steps <= 0) return lr0;
  const double frac =
      static_cast<double>(std::clamp<std::int64_t>(t, 0, total_steps)) / static_cast<double>(total_steps);
  return lr_min + 0.5 * (lr0 - lr_min) * (1.0 + std::cos(std::numbers::pi * frac));
}

}  // namespace l2s::nn
