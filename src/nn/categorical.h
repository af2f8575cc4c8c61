// Several independent categorical distributions ("heads") over one flat logit vector, with an
// optional per-option validity mask.
//
// Layout: logits [K], K = sum(head_sizes); head h owns logits[offset_h, offset_h + size_h).
// Mask: one bool per option ([K]); an empty mask means "every option allowed". A masked option
// has log-probability -infinity and probability exactly 0.0; it is never sampled and contributes
// nothing to the entropy or to any gradient. A head whose options are ALL masked is a caller error:
// Set() returns InvalidArgument (documented convention; there is no meaningful distribution).
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "nn/tensor.h"

namespace l2s::nn {

// Sizes and offsets of the heads. Build with Make(), which validates the sizes.
class HeadLayout {
 public:
  HeadLayout() = default;
  // Fails unless `sizes` is non-empty and every size is >= 1.
  static StatusOr<HeadLayout> Make(std::vector<int> sizes);

  int num_heads() const { return static_cast<int>(sizes_.size()); }
  int total() const { return total_; }  // K
  int size(int head) const { return sizes_[head]; }
  int offset(int head) const { return offsets_[head]; }
  const std::vector<int>& sizes() const { return sizes_; }

 private:
  std::vector<int> sizes_;
  std::vector<int> offsets_;
  int total_ = 0;
};

// Per-head masked log-softmax: logp[i] = logits[i] - logsumexp over the allowed options of i's
// head, and -infinity for masked options. logits, logp: [K]; mask: [K] or empty.
// Fails on a size mismatch, a head with no allowed option, or a non-finite allowed logit (a
// diverged network must surface as an error, not as NaN probabilities). Masked logits are ignored.
Status MaskedLogSoftmax(const HeadLayout& layout, std::span<const double> logits,
                        const std::vector<bool>& mask, std::span<double> logp);

// Per-head masked softmax: probs[i] = exp(logp[i]) with exactly 0.0 for masked options.
// Same failure cases as MaskedLogSoftmax. logits, probs: [K].
Status MaskedSoftmax(const HeadLayout& layout, std::span<const double> logits,
                     const std::vector<bool>& mask, std::span<double> probs);

// The distributions for one logit vector. Set() once, then query; reusing one object across calls
// does not allocate after the first Set() with a given K.
class MultiCategorical {
 public:
  MultiCategorical() = default;

  // logits [K], mask [K] or empty. Fails on a size mismatch or an all-masked head.
  Status Set(const HeadLayout& layout, std::span<const double> logits,
             const std::vector<bool>& mask);

  const HeadLayout& layout() const { return layout_; }
  const Vec& log_probs() const { return logp_; }  // [K], -inf where masked
  const Vec& probs() const { return p_; }         // [K], exactly 0 where masked

  // Inverse-CDF sample of head `head` from a uniform u in [0, 1): the first allowed option whose
  // cumulative probability exceeds u. Rounding can never select a masked option (if u is beyond
  // the accumulated mass, the last allowed option is returned).
  int Sample(int head, double u) const;

  // Index of the most likely allowed option of `head` (lowest index on ties).
  int Argmax(int head) const;

  // sum over heads of log p_h(chosen[h]). chosen: [num_heads]. Returns InvalidArgument if a
  // chosen index is out of range or masked.
  StatusOr<double> LogProb(std::span<const int> chosen) const;

  // dlogits += scale * d(sum_h log p_h(chosen[h])) / dlogits, i.e. per head
  //   scale * (1[j == c_h] - p_j) for allowed j, 0 for masked j.
  // Preconditions as LogProb (valid, allowed indices; checked with assert only: call LogProb
  // first). dlogits: [K].
  void AddLogProbGrad(std::span<const int> chosen, double scale, std::span<double> dlogits) const;

  // Entropy of one head, H_h = -sum_j p_j log p_j over allowed j (nats).
  double Entropy(int head) const;
  // sum over heads of H_h.
  double TotalEntropy() const;

  // dlogits += scale * d(sum_h H_h) / dlogits: per allowed j, -scale * p_j (log p_j + H_h).
  // Derivation: dp_i/dl_j = p_i (1[i==j] - p_j), so
  //   dH/dl_j = -sum_i p_i (1[i==j] - p_j)(log p_i + 1) = -p_j (log p_j + H).
  void AddEntropyGrad(double scale, std::span<double> dlogits) const;

 private:
  HeadLayout layout_;
  Vec logp_;  // [K]
  Vec p_;     // [K]
};

}  // namespace l2s::nn
