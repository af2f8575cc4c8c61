#include "nn/option_scorer.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "nn/rng.h"

namespace l2s::nn {

namespace {
// Gain of the last layer: near-uniform start, as nn::PolicyNet's logits layer (Stable-Baselines3's
// action-net gain 0.01).
constexpr double kLastGain = 0.01;
constexpr const char* kMagic = "l2s-option-scorer";
}  // namespace

int OptionScorer::NumWeights(int features, int hidden) {
  const int in = features + kDynamicFeatures;
  return hidden * in + hidden + hidden * hidden + hidden + hidden + 1;
}

std::string ScorerWeightsToText(const ScorerWeights& w) {
  std::string out = fmt::format("{} 1 {} {} {}\n", kMagic, w.features, w.hidden, w.values.size());
  for (double v : w.values) out += fmt::format("{:.17g}\n", v);
  return out;
}

StatusOr<ScorerWeights> ScorerWeightsFromText(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string magic;
  int version = 0;
  ScorerWeights w;
  size_t n = 0;
  if (!(in >> magic >> version >> w.features >> w.hidden >> n) || magic != kMagic || version != 1)
    return Status::InvalidArgument(
        fmt::format("option-scorer weights: expected the header \"{} 1 F H N\"", kMagic));
  if (w.features < 1 || w.hidden < 1 ||
      n != static_cast<size_t>(OptionScorer::NumWeights(w.features, w.hidden)))
    return Status::InvalidArgument(fmt::format(
        "option-scorer weights: {} values do not fit F = {}, H = {}", n, w.features, w.hidden));
  w.values.reserve(n);
  std::string tok;
  while (w.values.size() < n && in >> tok) {
    char* end = nullptr;
    const double v = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end != '\0' || !std::isfinite(v))
      return Status::InvalidArgument(fmt::format(
          "option-scorer weights: value {} (\"{}\") is not a finite number", w.values.size(), tok));
    w.values.push_back(v);
  }
  if (w.values.size() != n)
    return Status::InvalidArgument(fmt::format("option-scorer weights: {} values, expected {}",
                                               w.values.size(), n));
  if (in >> tok)
    return Status::InvalidArgument("option-scorer weights: text after the last value");
  return w;
}

StatusOr<OptionScorer> OptionScorer::Create(const OptionScorerConfig& config) {
  StatusOr<HeadLayout> layout = HeadLayout::Make(config.head_sizes);
  if (!layout.ok()) return Status::InvalidArgument("OptionScorer: " + layout.status().message());
  if (config.features.rows() != layout->total() || config.features.cols() < 1)
    return Status::InvalidArgument(fmt::format(
        "OptionScorer: features are [{}, {}], expected [{}, F >= 1]", config.features.rows(),
        config.features.cols(), layout->total()));
  if (static_cast<int>(config.ordinal.size()) != layout->num_heads())
    return Status::InvalidArgument("OptionScorer: one ordinal flag per head expected");
  if (config.hidden < 1) return Status::InvalidArgument("OptionScorer: hidden must be >= 1");
  const int f = static_cast<int>(config.features.cols());
  if (!config.initial.empty() &&
      static_cast<int>(config.initial.size()) != NumWeights(f, config.hidden))
    return Status::InvalidArgument(fmt::format(
        "OptionScorer: {} initial weights, expected {} (F = {}, H = {})", config.initial.size(),
        NumWeights(f, config.hidden), f, config.hidden));
  OptionScorer net;
  net.config_ = config;
  net.layout_ = std::move(layout).value();
  net.k_ = net.layout_.total();
  net.l1_ = Linear(f + kDynamicFeatures, config.hidden);
  net.l2_ = Linear(config.hidden, config.hidden);
  net.l3_ = Linear(config.hidden, 1);
  net.logits_ = Vec::Zero(net.k_);
  net.Reinitialize(config.seed);
  return net;
}

void OptionScorer::Reinitialize(std::uint64_t seed) {
  config_.seed = seed;
  if (!config_.initial.empty()) {
    ScorerWeights w{features(), config_.hidden, config_.initial};
    (void)SetWeights(w);  // sized in Create
    ZeroGrad();
  } else {
    Rng rng(seed);
    l1_.Init(rng);
    l2_.Init(rng);
    l3_.Init(rng, kLastGain);
  }
  has_forward_ = false;
}

void OptionScorer::BuildInput(const ConstMatRef& obs) {
  const int f = features();
  x_.resize(k_, f + kDynamicFeatures);
  x_.leftCols(f) = config_.features;
  x_.rightCols(kDynamicFeatures).setZero();
  const double rows = static_cast<double>(obs.rows());
  for (int h = 0; h < layout_.num_heads(); ++h) {
    const int o = layout_.offset(h);
    const int n = layout_.size(h);
    int e = -1;  // the best elite's option (row 0), -1 when row 0 has none
    for (int i = 0; i < n; ++i)
      if (obs(0, o + i) > 0.5) e = i;
    for (int i = 0; i < n; ++i) {
      double share = 0;
      for (Eigen::Index r = 0; r < obs.rows(); ++r) share += obs(r, o + i);
      x_(o + i, f + 0) = share / rows;
      x_(o + i, f + 1) = obs(0, o + i);
      x_(o + i, f + 2) = e >= 0 ? 1.0 : 0.0;
      if (e >= 0 && n > 1 && config_.ordinal[h]) {
        const double d = static_cast<double>(i - e) / static_cast<double>(n - 1);
        x_(o + i, f + 3) = std::abs(d);
        x_(o + i, f + 4) = d;
      }
    }
  }
}

Status OptionScorer::Forward(const ConstMatRef& obs) {
  if (obs.rows() < 1 || obs.cols() != k_ + 1)
    return Status::InvalidArgument(fmt::format(
        "OptionScorer::Forward: obs is [{}, {}], expected [T >= 1, {}]", obs.rows(), obs.cols(),
        k_ + 1));
  BuildInput(obs);
  l1_.Forward(x_, &h1_);
  g1_.Forward(h1_, &a1_);
  l2_.Forward(a1_, &h2_);
  g2_.Forward(h2_, &a2_);
  l3_.Forward(a2_, &out_);
  logits_ = out_.col(0);
  has_forward_ = true;
  return Status::Ok();
}

Status OptionScorer::Backward(const Vec& dlogits) {
  if (!has_forward_) return Status::InvalidArgument("OptionScorer::Backward: no Forward");
  if (dlogits.size() != k_)
    return Status::InvalidArgument(fmt::format(
        "OptionScorer::Backward: dlogits has {} entries, expected {}", dlogits.size(), k_));
  dout_.resize(k_, 1);
  dout_.col(0) = dlogits;
  l3_.Backward(dout_, &da2_);
  g2_.Backward(da2_, &dh2_);
  l2_.Backward(dh2_, &da1_);
  g1_.Backward(da1_, &dh1_);
  l1_.Backward(dh1_, nullptr);
  return Status::Ok();
}

std::vector<ParamRef> OptionScorer::Params() {
  std::vector<ParamRef> params;
  l1_.CollectParams("scorer.l1", &params);
  l2_.CollectParams("scorer.l2", &params);
  l3_.CollectParams("scorer.l3", &params);
  return params;
}

void OptionScorer::ZeroGrad() {
  l1_.ZeroGrad();
  l2_.ZeroGrad();
  l3_.ZeroGrad();
}

ScorerWeights OptionScorer::Weights() {
  ScorerWeights w{features(), config_.hidden, {}};
  for (const ParamRef& p : Params()) w.values.insert(w.values.end(), p.value, p.value + p.size);
  return w;
}

Status OptionScorer::SetWeights(const ScorerWeights& w) {
  if (w.features != features() || w.hidden != config_.hidden ||
      static_cast<int>(w.values.size()) != NumWeights(features(), config_.hidden))
    return Status::InvalidArgument(fmt::format(
        "OptionScorer: weights for F = {}, H = {} ({} values) do not fit F = {}, H = {}",
        w.features, w.hidden, w.values.size(), features(), config_.hidden));
  size_t at = 0;
  for (const ParamRef& p : Params()) {
    std::copy(w.values.begin() + static_cast<std::ptrdiff_t>(at),
              w.values.begin() + static_cast<std::ptrdiff_t>(at + p.size), p.value);
    at += p.size;
  }
  return Status::Ok();
}

}  // namespace l2s::nn
