// The interface the RL searcher drives a policy network through: observation [rows, A] in,
// flat logits [K] over the searcher's heads out, a backward pass accumulating parameter
// gradients, and re-initialisation for the searcher's restarts. Two implementations:
// nn::PolicyNet (the per-problem network: input and output sized by the problem's option lists)
// and nn::OptionScorer (one shared scorer over per-option features, whose weights do not depend
// on the problem: the pretrained policy of issue 14).
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "nn/categorical.h"
#include "nn/layers.h"
#include "nn/tensor.h"

namespace l2s::nn {

class PolicyModel {
 public:
  virtual ~PolicyModel() = default;
  // obs [T >= 1, A] -> logits() [K]. Fails on a shape mismatch.
  virtual Status Forward(const ConstMatRef& obs) = 0;
  virtual const Vec& logits() const = 0;
  // Backpropagates dL/dlogits [K] through the latest Forward, ACCUMULATING parameter gradients.
  virtual Status Backward(const Vec& dlogits) = 0;
  // A new lifetime's weights (PolicyNet: redrawn from seed; OptionScorer: its initial weights,
  // pretrained or drawn from seed) and zeroed gradients.
  virtual void Reinitialize(std::uint64_t seed) = 0;
  virtual std::vector<ParamRef> Params() = 0;
  virtual void ZeroGrad() = 0;
  virtual const HeadLayout& layout() const = 0;
};

}  // namespace l2s::nn
