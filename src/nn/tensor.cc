#include "nn/tensor.h"

#include <algorithm>
#include <cmath>

namespace l2s::nn {

void ZeroGrad(const std::vector<ParamRef>& params) {
  for (const ParamRef& p : params) std::fill(p.grad, p.grad + p.size, 0.0);
}

std::size_t CountParams(const std::vector<ParamRef>& params) {
  std::size_t n = 0;
  for (const ParamRef& p : params) n += p.size;
  return n;
}

double GlobalGradNorm(const std::vector<ParamRef>& params) {
  double sum_sq = 0.0;
  for (const ParamRef& p : params) {
    sum_sq += Eigen::Map<const Vec>(p.grad, static_cast<Eigen::Index>(p.size)).squaredNorm();
  }
  return std::sqrt(sum_sq);
}

}  // namespace l2s::nn
