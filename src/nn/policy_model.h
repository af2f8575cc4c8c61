// The interface the RL searcher drives a policy network through: observation [rows, A] in,
// flat logits [K] over the searcher's heads out, a backward pass accumulating parameter
// gradients, and re-initialisation for the searcher's restarts. Implemented by nn::PolicyNet (the
// per-problem network: input and output sized by the problem's option lists). (A shared
// pretrained scorer over per-option features implemented it until it was measured to add nothing
// outside its training problems: docs/dev/RL_STUDY.md.)
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
  // A new lifetime's weights (redrawn from seed) and zeroed gradients.
  virtual void Reinitialize(std::uint64_t seed) = 0;
  virtual std::vector<ParamRef> Params() = 0;
  virtual void ZeroGrad() = 0;
  virtual const HeadLayout& layout() const = 0;
};

}  // namespace l2s::nn
