#include "search/rl_features.h"

#include <algorithm>
#include <cmath>

#include "common/dtype.h"
#include "model/counts.h"

#include <fmt/format.h>

namespace l2s {

namespace {

double Log2(double x) { return x > 0 ? std::log2(x) : 0.0; }

// Head-kind column of head h (see rl_features.h).
int KindColumn(const StrategySpace& space, int h) {
  if (h < StrategySpace::kFirstDim) return h;  // pp, tp, ep, batch, sp
  const int ops = static_cast<int>(space.searched_ops().size());
  if (h < StrategySpace::kFirstDim + ops)
    return 5 + static_cast<int>(space.searched_ops()[h - StrategySpace::kFirstDim]);
  if (h == space.slots_head()) return 5 + kNumOps;
  if (h == space.overlap_head()) return 6 + kNumOps;
  return 7 + kNumOps;  // mtp
}

}  // namespace

std::vector<double> RlProblemFeatures(const Problem& p) {
  std::vector<double> f(kRlProblemFeatures, 0.0);
  const ModelSpec& m = p.model;
  const Workload& w = p.workload;
  f[0] = w.mode == Mode::kDecode ? 1 : 0;
  f[1] = w.mode == Mode::kPrefill ? 1 : 0;
  f[2] = w.mode == Mode::kServe ? 1 : 0;
  f[3] = Log2(p.cluster.num_gpus) / 10;
  f[4] = m.num_experts > 0 ? 1 : 0;
  f[5] = m.attention == AttentionKind::kMla ? 1 : 0;
  f[6] = Log2(m.num_experts + 1) / 9;
  const ParamCounts pc = CountParams(m);
  f[7] = std::log10(std::max<double>(1, static_cast<double>(pc.total))) / 12;
  f[8] = std::log10(std::max<double>(1, static_cast<double>(pc.active))) / 12;
  const double weight_bytes = static_cast<double>(pc.total) * BytesPerElement(w.weight);
  f[9] = p.cluster.gpu.hbm_bytes > 0 ? Log2(weight_bytes / p.cluster.gpu.hbm_bytes) / 10 : 0;
  f[10] = Log2(static_cast<double>(w.mode == Mode::kDecode ? w.context : w.isl)) / 17;
  f[11] = (w.ttft_ms > 0 || w.tpot_ms > 0) ? 1 : 0;
  const double flops = p.cluster.gpu.PeakFlops(w.weight);
  f[12] = p.cluster.gpu.hbm_bw > 0 ? Log2(flops / p.cluster.gpu.hbm_bw) / 10 : 0;
  f[13] = m.num_layers / 128.0;
  return f;
}

nn::Mat RlOptionFeatures(const Problem& p, const StrategySpace& space) {
  int k = 0;
  for (int h = 0; h < space.num_heads(); ++h) k += space.head_size(h);
  nn::Mat x = nn::Mat::Zero(k, RlFeatureCount());
  const std::vector<double> prob = RlProblemFeatures(p);
  const double log_gpus = Log2(space.num_gpus());
  const int experts = p.model.num_experts;
  int row = 0;
  for (int h = 0; h < space.num_heads(); ++h) {
    const int n = space.head_size(h);
    const int kind = KindColumn(space, h);
    for (int i = 0; i < n; ++i, ++row) {
      auto f = x.row(row);
      f(kind) = 1;
      if (n > 1) f(22) = static_cast<double>(i) / (n - 1);
      for (int j = 0; j < kRlProblemFeatures; ++j) f(kRlOptionFeatures + j) = prob[j];
      if (h == StrategySpace::kPp || h == StrategySpace::kTp || h == StrategySpace::kEp) {
        const std::vector<int>& opts = h == StrategySpace::kPp   ? space.pp_options()
                                       : h == StrategySpace::kTp ? space.tp_options()
                                                                 : space.ep_options();
        const double l = Log2(opts[i]);
        f(20) = log_gpus > 0 ? l / log_gpus : 0;
        f(21) = l / 10;
      } else if (h == StrategySpace::kBatch) {
        f(21) = Log2(space.batch_options()[i]) / 10;  // auto (0) -> 0
      } else if (h == StrategySpace::kSp) {
        f(26) = space.option_name(h, i) == "on" ? 1 : 0;
      } else if (kind >= 5 && kind < 5 + kNumOps) {
        const std::string name = space.option_name(h, i);
        f(23) = name == "dim0" ? 1 : 0;
        f(24) = name == "dim1" ? 1 : 0;
        f(25) = name == "none" ? 1 : 0;
      } else if (h == space.slots_head()) {
        const int s = space.slot_options()[i];
        f(27) = s > 0 && experts > 0 ? 4.0 * (s - experts) / experts : 0;
      } else if (h == space.overlap_head()) {
        const Overlap o = space.overlap_options()[i];
        f(28) = o == Overlap::kNone ? 1 : 0;
        f(29) = o == Overlap::kTbo ? 1 : 0;
        f(30) = o == Overlap::kSbo ? 1 : 0;
      } else if (h == space.mtp_head()) {
        f(31) = space.mtp_options()[i] / 3.0;
      }
    }
  }
  return x;
}

}  // namespace l2s

namespace l2s {

StatusOr<std::unique_ptr<nn::OptionScorer>> MakeRlScorer(const Problem& p,
                                                         const StrategySpace& space,
                                                         const nn::ScorerWeights* initial,
                                                         uint64_t seed) {
  nn::OptionScorerConfig c;
  c.features = RlOptionFeatures(p, space);
  c.head_sizes = space.head_sizes();
  for (int h = 0; h < space.num_heads(); ++h) c.ordinal.push_back(space.ordinal(h));
  c.hidden = kRlScorerHidden;
  c.seed = seed;
  if (initial != nullptr) {
    if (initial->features != RlFeatureCount())
      return Status::InvalidArgument(fmt::format(
          "rl warm start: the pretrained weights have {} features per option, this build {} "
          "(re-run tools/pretrain_rl)", initial->features, RlFeatureCount()));
    c.hidden = initial->hidden;
    c.initial = initial->values;
  }
  StatusOr<nn::OptionScorer> net = nn::OptionScorer::Create(c);
  if (!net.ok()) return net.status();
  return std::make_unique<nn::OptionScorer>(std::move(net).value());
}

}  // namespace l2s
