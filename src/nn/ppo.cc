#include "nn/ppo.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace l2s::nn {

namespace {

StatusOr<PpoStats> Run(PolicyNet& net, std::span<const PolicySample> batch, const PpoConfig& config,
                       PpoWorkspace* workspace, bool with_grad) {
  if (batch.empty()) return Status::InvalidArgument("PPO loss: empty batch");
  if (!(config.clip_eps >= 0.0)) return Status::InvalidArgument("PPO loss: clip_eps must be >= 0");
  PpoWorkspace local;
  PpoWorkspace& ws = workspace != nullptr ? *workspace : local;
  const double inv_n = 1.0 / static_cast<double>(batch.size());
  const HeadLayout& layout = net.layout();
  PpoStats stats;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const PolicySample& s = batch[i];
    Status st = net.Forward(s.obs);
    if (!st.ok()) return st;
    const Vec* lg = &net.logits();
    if (s.logit_offset.size() != 0) {
      if (s.logit_offset.size() != lg->size())
        return Status::InvalidArgument("PPO sample " + std::to_string(i) +
                                       ": logit_offset size differs from the logits'");
      ws.logits = *lg + s.logit_offset;
      lg = &ws.logits;
    }
    const Vec& logits = *lg;
    st = ws.dist.Set(layout, std::span<const double>(logits.data(), logits.size()), s.mask);
    if (!st.ok()) return st;
    StatusOr<double> logp = ws.dist.LogProb(s.actions);
    if (!logp.ok()) return Status::InvalidArgument("PPO sample " + std::to_string(i) + ": " +
                                                   logp.status().message());
    const double log_ratio = *logp - s.old_log_prob;
    const double r = std::exp(log_ratio);
    const double a = s.advantage;
    const double surr_unclipped = r * a;
    const double surr_clipped = std::clamp(r, 1.0 - config.clip_eps, 1.0 + config.clip_eps) * a;
    const double entropy = ws.dist.TotalEntropy();
    stats.policy_loss -= std::min(surr_unclipped, surr_clipped) * inv_n;
    stats.mean_entropy += entropy * inv_n;
    stats.approx_kl += ((r - 1.0) - log_ratio) * inv_n;
    if (std::abs(r - 1.0) > config.clip_eps) stats.clip_fraction += inv_n;
    if (!with_grad) continue;
    const double dloss_dlogp = surr_unclipped <= surr_clipped ? -a * r * inv_n : 0.0;
    ws.dlogits.setZero(logits.size());
    std::span<double> dl(ws.dlogits.data(), ws.dlogits.size());
    ws.dist.AddLogProbGrad(s.actions, dloss_dlogp, dl);
    if (config.entropy_coef != 0.0) ws.dist.AddEntropyGrad(-config.entropy_coef * inv_n, dl);
    st = net.Backward(ws.dlogits);
    if (!st.ok()) return st;
  }
  stats.loss = stats.policy_loss - config.entropy_coef * stats.mean_entropy;
  return stats;
}

}  // namespace

StatusOr<PpoStats> PpoLoss(PolicyNet& net, std::span<const PolicySample> batch,
                           const PpoConfig& config, PpoWorkspace* workspace) {
  return Run(net, batch, config, workspace, /*with_grad=*/false);
}

StatusOr<PpoStats> PpoLossAndGrad(PolicyNet& net, std::span<const PolicySample> batch,
                                  const PpoConfig& config, PpoWorkspace* workspace) {
  return Run(net, batch, config, workspace, /*with_grad=*/true);
}

}  // namespace l2s::nn
