// Dense types and the parameter view shared by every layer of the hand-written network library.
//
// Conventions (llm.c style):
//  - Activations are row-major matrices, one row per token/elite: shape comments read `[T, d]`.
//  - A layer owns its parameters and their gradients as Eigen objects; `ParamRef` is a flat view
//    {value, grad, size} on one of them so an optimiser can walk every parameter uniformly.
//  - Gradients ACCUMULATE (`+=`) in Backward(); callers zero them with ZeroGrad() between steps.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

namespace l2s::nn {

// Row-major dynamic matrix of doubles: an activation `[rows, cols]` or a weight `[out, in]`.
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Column vector of doubles (biases, gains, flat logits).
using Vec = Eigen::VectorXd;
// A row vector `[1, d]`, used for the pooled representation.
using RowVec = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor>;

// A mutable view of one parameter tensor and its gradient, both contiguous, `size` doubles each.
// The pointers stay valid as long as the owning layer is alive and not moved/resized.
struct ParamRef {
  std::string name;       // e.g. "block.attn.qkv.weight"
  double* value = nullptr;  // [size]
  double* grad = nullptr;   // [size]
  std::size_t size = 0;
};

// Sets every gradient in `params` to zero.
void ZeroGrad(const std::vector<ParamRef>& params);

// Total number of scalars over `params`.
std::size_t CountParams(const std::vector<ParamRef>& params);

// sqrt(sum of squared gradients) over every parameter (the "global norm" used for clipping).
double GlobalGradNorm(const std::vector<ParamRef>& params);

}  // namespace l2s::nn
