// Generic multi-categorical policy-gradient loss (PPO clipped surrogate + entropy bonus) for a
// PolicyNet. It knows nothing about strategies: an action is one chosen index per head.
//
// For a batch of N samples i with joint log-probability logp_i = sum_h log p_h(a_ih) under the
// current network (masked per nn/categorical.h):
//   r_i  = exp(logp_i - old_log_prob_i)
//   L    = -(1/N) sum_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i) - c_ent (1/N) sum_i H_i
// where H_i = sum_h H_h is the entropy of the joint distribution of independent heads
// (Schulman et al. 2017, eq. 7 and 9, without the value term).
//
// Gradient: dL/dlogp_i = -A_i r_i / N when the unclipped term is the minimum (ties included),
// else 0 (the clipped term is then constant in the parameters); it flows to the logits through
// MultiCategorical::AddLogProbGrad, the entropy term through AddEntropyGrad.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "nn/categorical.h"
#include "nn/policy_net.h"
#include "nn/tensor.h"

namespace l2s::nn {

struct PolicySample {
  Mat obs;                   // [T, A] observation the action was sampled from
  std::vector<int> actions;  // [num_heads] chosen option per head
  std::vector<bool> mask;    // [K] allowed options (true = allowed), or empty for "all allowed"
  double old_log_prob = 0.0; // joint log-probability under the sampling policy
  double advantage = 0.0;    // e.g. reward - running-mean baseline
  // [K] fixed logits added to the network's before the softmax (a prior that is constant in the
  // parameters, e.g. the RL searcher's elite prior), or empty for none. The gradient flows into
  // the network unchanged.
  Vec logit_offset;
};

struct PpoConfig {
  double clip_eps = 0.2;      // Stable-Baselines3 PPO default clip_range
  double entropy_coef = 0.0;  // Stable-Baselines3 PPO default ent_coef
};

struct PpoStats {
  double loss = 0.0;           // L above
  double policy_loss = 0.0;    // the clipped-surrogate part of L
  double mean_entropy = 0.0;   // (1/N) sum_i H_i (nats)
  double approx_kl = 0.0;      // (1/N) sum_i (r_i - 1) - log r_i  (>= 0; Schulman's k3 estimator)
  double clip_fraction = 0.0;  // share of samples with |r_i - 1| > eps
};

// Reusable scratch so repeated calls do not allocate; optional.
struct PpoWorkspace {
  MultiCategorical dist;
  Vec dlogits;  // [K]
  Vec logits;   // [K] network logits + the sample's offset
};

// Evaluates L on `batch` (one Forward per sample) without touching gradients.
// Fails on an empty batch, bad shapes, a masked or out-of-range action, or an all-masked head.
StatusOr<PpoStats> PpoLoss(PolicyNet& net, std::span<const PolicySample> batch,
                           const PpoConfig& config, PpoWorkspace* workspace = nullptr);

// Evaluates L and ACCUMULATES dL/dparams into net's gradients (one Forward + Backward per sample;
// call net.ZeroGrad() first for a fresh gradient). Same failure cases as PpoLoss; on failure the
// gradients may be partially accumulated.
StatusOr<PpoStats> PpoLossAndGrad(PolicyNet& net, std::span<const PolicySample> batch,
                                  const PpoConfig& config, PpoWorkspace* workspace = nullptr);

}  // namespace l2s::nn
