#include "nn/categorical.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace l2s::nn {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

bool Allowed(const std::vector<bool>& mask, int i) { return mask.empty() || mask[i]; }
}  // namespace

StatusOr<HeadLayout> HeadLayout::Make(std::vector<int> sizes) {
  if (sizes.empty()) return Status::InvalidArgument("HeadLayout: no heads");
  HeadLayout layout;
  layout.offsets_.reserve(sizes.size());
  int total = 0;
  for (std::size_t h = 0; h < sizes.size(); ++h) {
    if (sizes[h] < 1) {
      return Status::InvalidArgument("HeadLayout: head " + std::to_string(h) + " has size " +
                                     std::to_string(sizes[h]) + " (must be >= 1)");
    }
    layout.offsets_.push_back(total);
    total += sizes[h];
  }
  layout.sizes_ = std::move(sizes);
  layout.total_ = total;
  return layout;
}

Status MaskedLogSoftmax(const HeadLayout& layout, std::span<const double> logits,
                        const std::vector<bool>& mask, std::span<double> logp) {
  const std::size_t k = static_cast<std::size_t>(layout.total());
  if (logits.size() != k || logp.size() != k) {
    return Status::InvalidArgument("MaskedLogSoftmax: expected " + std::to_string(k) +
                                   " logits, got " + std::to_string(logits.size()));
  }
  if (!mask.empty() && mask.size() != k) {
    return Status::InvalidArgument("MaskedLogSoftmax: mask has " + std::to_string(mask.size()) +
                                   " entries, expected " + std::to_string(k));
  }
  for (int h = 0; h < layout.num_heads(); ++h) {
    const int begin = layout.offset(h);
    const int end = begin + layout.size(h);
    double mx = kNegInf;
    for (int i = begin; i < end; ++i) {
      if (!Allowed(mask, i)) continue;
      if (!std::isfinite(logits[i])) {
        return Status::InvalidArgument("MaskedLogSoftmax: logit " + std::to_string(i) +
                                       " is not finite");
      }
      mx = std::max(mx, logits[i]);
    }
    if (mx == kNegInf) {
      return Status::InvalidArgument("MaskedLogSoftmax: every option of head " +
                                     std::to_string(h) + " is masked");
    }
    double sum = 0.0;
    for (int i = begin; i < end; ++i) {
      if (Allowed(mask, i)) sum += std::exp(logits[i] - mx);
    }
    const double lse = mx + std::log(sum);
    for (int i = begin; i < end; ++i) logp[i] = Allowed(mask, i) ? logits[i] - lse : kNegInf;
  }
  return Status::Ok();
}

Status MaskedSoftmax(const HeadLayout& layout, std::span<const double> logits,
                     const std::vector<bool>& mask, std::span<double> probs) {
  Status s = MaskedLogSoftmax(layout, logits, mask, probs);
  if (!s.ok()) return s;
  for (double& p : probs) p = p == kNegInf ? 0.0 : std::exp(p);
  return Status::Ok();
}

Status MultiCategorical::Set(const HeadLayout& layout, std::span<const double> logits,
                             const std::vector<bool>& mask) {
  if (layout_.sizes() != layout.sizes()) layout_ = layout;
  logp_.resize(layout.total());
  p_.resize(layout.total());
  Status s = MaskedLogSoftmax(layout, logits, mask, std::span<double>(logp_.data(), logp_.size()));
  if (!s.ok()) return s;
  for (Eigen::Index i = 0; i < logp_.size(); ++i) {
    p_[i] = logp_[i] == kNegInf ? 0.0 : std::exp(logp_[i]);  // exp(-inf) is 0 too; explicit
  }
  return Status::Ok();
}

int MultiCategorical::Sample(int head, double u) const {
  const int begin = layout_.offset(head);
  const int end = begin + layout_.size(head);
  double cum = 0.0;
  int last_allowed = -1;
  for (int i = begin; i < end; ++i) {
    if (p_[i] <= 0.0) continue;  // masked (or underflowed to 0): never sampled
    cum += p_[i];
    last_allowed = i;
    if (u < cum) return i - begin;
  }
  if (last_allowed < 0) {  // every probability underflowed: fall back to the mode
    return Argmax(head);
  }
  return last_allowed - begin;
}

int MultiCategorical::Argmax(int head) const {
  const int begin = layout_.offset(head);
  int best = begin;
  for (int i = begin + 1; i < begin + layout_.size(head); ++i) {
    if (logp_[i] > logp_[best]) best = i;
  }
  return best - begin;
}

StatusOr<double> MultiCategorical::LogProb(std::span<const int> chosen) const {
  if (static_cast<int>(chosen.size()) != layout_.num_heads()) {
    return Status::InvalidArgument("LogProb: expected " + std::to_string(layout_.num_heads()) +
                                   " chosen indices, got " + std::to_string(chosen.size()));
  }
  double total = 0.0;
  for (int h = 0; h < layout_.num_heads(); ++h) {
    const int c = chosen[h];
    if (c < 0 || c >= layout_.size(h)) {
      return Status::InvalidArgument("LogProb: index " + std::to_string(c) + " out of range for head " +
                                     std::to_string(h));
    }
    const double lp = logp_[layout_.offset(h) + c];
    if (lp == kNegInf) {
      return Status::InvalidArgument("LogProb: option " + std::to_string(c) + " of head " +
                                     std::to_string(h) + " is masked");
    }
    total += lp;
  }
  return total;
}

void MultiCategorical::AddLogProbGrad(std::span<const int> chosen, double scale,
                                      std::span<double> dlogits) const {
  assert(static_cast<int>(chosen.size()) == layout_.num_heads());
  assert(static_cast<int>(dlogits.size()) == layout_.total());
  for (int h = 0; h < layout_.num_heads(); ++h) {
    const int begin = layout_.offset(h);
    for (int j = begin; j < begin + layout_.size(h); ++j) dlogits[j] -= scale * p_[j];
    dlogits[begin + chosen[h]] += scale;
  }
}

double MultiCategorical::Entropy(int head) const {
  const int begin = layout_.offset(head);
  double ent = 0.0;
  for (int j = begin; j < begin + layout_.size(head); ++j) {
    if (p_[j] > 0.0) ent -= p_[j] * logp_[j];
  }
  return ent;
}

double MultiCategorical::TotalEntropy() const {
  double total = 0.0;
  for (int h = 0; h < layout_.num_heads(); ++h) total += Entropy(h);
  return total;
}

void MultiCategorical::AddEntropyGrad(double scale, std::span<double> dlogits) const {
  assert(static_cast<int>(dlogits.size()) == layout_.total());
  for (int h = 0; h < layout_.num_heads(); ++h) {
    const double ent = Entropy(h);
    const int begin = layout_.offset(h);
    for (int j = begin; j < begin + layout_.size(h); ++j) {
      if (p_[j] > 0.0) dlogits[j] -= scale * p_[j] * (logp_[j] + ent);
    }
  }
}

}  // namespace l2s::nn
