// A policy network whose weights do not depend on the problem (issue 14, item 3: pretraining
// that carries across problems). Every option of every head is one row of a feature matrix whose
// columns mean the same on every problem (search/rl_features.h: head kind, option value relative
// to the cluster, problem features), and one shared MLP scores each row:
//
//   x_k = [ features_k (F, fixed per problem) | dynamic_k (kDynamicFeatures, from the elites) ]
//   logit_k = w3 . gelu(W2 gelu(W1 x_k + b1) + b2) + b3          (W1 [H, F + 5], W2 [H, H])
//
// so heads of any size are scored by one function of (state, option). The dynamic features come
// from the searcher's observation (rl.h: one row per elite, the one-hot of every head's option
// and a value column), for option i of head h with n options:
//   share    fraction of the elite rows that chose i at h
//   best     1 when the best elite (row 0) chose i
//   has      1 when the observation has an elite at all (row 0 not all zero)
//   dist     |i - e| / (n - 1) on ordered heads (pp, tp, ep, batch), e the best elite's option
//   signed   (i - e) / (n - 1) on ordered heads
// (0 where not defined). The observation's value column is not used.
//
// Initialisation: Glorot-uniform hidden layers, the last one at gain 0.01 (near-uniform start, as
// nn::PolicyNet), or a given weight vector (the pretrained weights); Reinitialize goes back to
// that same start until ClearInitial, after which it draws from its seed (the RL searcher's
// restarts: only its first lifetime starts from what pretraining learned).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "nn/categorical.h"
#include "nn/layers.h"
#include "nn/policy_model.h"
#include "nn/tensor.h"

namespace l2s::nn {

// A weight vector with the shape it belongs to (saved and loaded as text).
struct ScorerWeights {
  int features = 0;             // F, the fixed features per option
  int hidden = 0;               // H
  std::vector<double> values;   // NumWeights(features, hidden), in OptionScorer::Params() order
};

// Text form: "l2s-option-scorer 1 F H N" then the N values, one per line, %.17g (exact round
// trip of doubles).
std::string ScorerWeightsToText(const ScorerWeights& w);
// InvalidArgument, saying what is wrong, on a bad header, a count mismatch or a bad number.
StatusOr<ScorerWeights> ScorerWeightsFromText(std::string_view text);

struct OptionScorerConfig {
  Mat features;                 // [K, F] fixed features of every option, heads in order
  std::vector<int> head_sizes;  // options per head, sum K
  std::vector<bool> ordinal;    // [heads] ordered heads (distance features)
  int hidden = 32;              // H
  std::uint64_t seed = 0;       // random initialisation when `initial` is empty
  std::vector<double> initial;  // initial weights (empty: random from seed)
};

class OptionScorer final : public PolicyModel {
 public:
  static constexpr int kDynamicFeatures = 5;
  static int NumWeights(int features, int hidden);

  // Fails on inconsistent sizes (features rows != K, ordinal size != heads, hidden < 1, initial
  // of the wrong length).
  static StatusOr<OptionScorer> Create(const OptionScorerConfig& config);

  // obs [T >= 1, K + 1] (the searcher's observation) -> logits [K].
  Status Forward(const ConstMatRef& obs) override;
  const Vec& logits() const override { return logits_; }
  Status Backward(const Vec& dlogits) override;
  void Reinitialize(std::uint64_t seed) override;
  std::vector<ParamRef> Params() override;
  void ZeroGrad() override;
  const HeadLayout& layout() const override { return layout_; }

  // The current weights, flattened in Params() order, with their shape.
  ScorerWeights Weights();
  // Replaces the current weights (not the initial ones). Fails on a shape mismatch.
  Status SetWeights(const ScorerWeights& w);
  // Later Reinitialize calls draw random weights from their seed instead of the initial ones.
  void ClearInitial() { config_.initial.clear(); }
  int features() const { return static_cast<int>(config_.features.cols()); }
  int hidden() const { return config_.hidden; }

 private:
  OptionScorer() = default;
  void BuildInput(const ConstMatRef& obs);

  OptionScorerConfig config_;
  HeadLayout layout_;
  int k_ = 0;
  Linear l1_, l2_, l3_;
  GELU g1_, g2_;
  bool has_forward_ = false;
  Mat x_;       // [K, F + 5]
  Mat h1_, a1_, h2_, a2_, out_;  // activations
  Vec logits_;  // [K]
  Mat dout_, da2_, dh2_, da1_, dh1_;  // backward scratch
};

}  // namespace l2s::nn
