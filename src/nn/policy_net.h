// The searcher's policy network (PAPER.md, "Policy"): attention over the T elite strategies.
//
//   obs [T, A] --Linear A->d--> e [T, d] --EncoderBlock--> z [T, d] --mean over T--> p [1, d]
//     --Linear d->d--> u [1, d] --GELU|ReLU--> a [1, d] --Linear d->K--> logits [K],
//   K = sum(head_sizes).
//
// The network knows nothing about strategies: the caller turns logits into per-head masked
// distributions with nn/categorical.h. There is no value head (the searcher uses a running-mean
// baseline).
//
// Initialisation (deterministic from `seed`, see nn/rng.h): every Linear is Glorot-uniform with
// zero bias, LayerNorms start at gain 1 / bias 0, and the final logits layer uses gain 0.01 so the
// initial policy is close to uniform (the convention of Stable-Baselines3's ActorCriticPolicy,
// which initialises its action net orthogonally with gain 0.01; the paper trained with SB3).
//
// Cost: buffers are resized only when the row count T changes, so a steady-state
// Forward + Backward at fixed T performs no heap allocation.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "nn/attention.h"
#include "nn/categorical.h"
#include "nn/layers.h"
#include "nn/policy_model.h"
#include "nn/rng.h"
#include "nn/tensor.h"

namespace l2s::nn {

enum class Activation { kGelu, kRelu };

struct PolicyNetConfig {
  int input_dim = 0;            // A: features per observation row
  int embed_dim = 256;          // d (the paper uses 256)
  int heads = 4;                // attention heads; embed_dim % heads == 0
  int mlp_hidden = 256;         // hidden width of the encoder block's MLP
  std::vector<int> head_sizes;  // options per categorical head, each >= 1
  Activation mlp_activation = Activation::kGelu;  // activation of the post-pool MLP
  std::uint64_t seed = 0;
};

class PolicyNet final : public PolicyModel {
 public:
  // Validates the config (all dims >= 1, embed_dim % heads == 0, at least one head) and
  // initialises the weights from config.seed.
  static StatusOr<PolicyNet> Create(const PolicyNetConfig& config);

  // obs [T, A] with 1 <= T -> logits() [K]. Fails (and leaves logits untouched) on a shape mismatch.
  Status Forward(const ConstMatRef& obs) override;
  const Vec& logits() const override { return logits_; }  // [K] from the latest Forward

  // Backpropagates dL/dlogits [K] through the latest Forward and ACCUMULATES every parameter
  // gradient. Fails if no Forward happened or on a size mismatch. dL/dobs is not computed.
  Status Backward(const Vec& dlogits) override;

  // Re-draws all weights from `seed` (the searcher's restarts) and zeroes the gradients.
  void Reinitialize(std::uint64_t seed) override;

  // Views of every parameter and its gradient, in a fixed order. Valid while this object is alive
  // and not moved; re-fetch after a move.
  std::vector<ParamRef> Params() override;
  void ZeroGrad() override;  // allocation-free

  const PolicyNetConfig& config() const { return config_; }
  const HeadLayout& layout() const override { return layout_; }  // the heads over logits()
  int num_logits() const { return k_; }

 private:
  PolicyNet() = default;

  PolicyNetConfig config_;
  HeadLayout layout_;
  int k_ = 0;
  Linear embed_;       // A -> d
  EncoderBlock block_;
  MeanPool pool_;
  Linear fc_a_;        // d -> d
  GELU gelu_;
  ReLU relu_;
  Linear fc_b_;        // d -> K
  bool has_forward_ = false;
  // Forward activations.
  Mat e_;       // [T, d]
  Mat z_;       // [T, d]
  Mat p_;       // [1, d]
  Mat u_;       // [1, d]
  Mat a_;       // [1, d]
  Mat out_;     // [1, K]
  Vec logits_;  // [K]
  // Backward scratch.
  Mat dout_;    // [1, K]
  Mat da_;      // [1, d]
  Mat du_;      // [1, d]
  Mat dp_;      // [1, d]
  Mat dz_;      // [T, d]
  Mat de_;      // [T, d]
};

}  // namespace l2s::nn
