#include "nn/policy_net.h"

#include <string>

namespace l2s::nn {

namespace {
// Gain of the final logits layer: Stable-Baselines3 ActorCriticPolicy uses 0.01 for the action net
// (stable_baselines3/common/policies.py, `self.action_net: 0.01`), giving a near-uniform start.
constexpr double kLogitsInitGain = 0.01;
}  // namespace

StatusOr<PolicyNet> PolicyNet::Create(const PolicyNetConfig& config) {
  if (config.input_dim < 1) return Status::InvalidArgument("PolicyNet: input_dim must be >= 1");
  if (config.embed_dim < 1) return Status::InvalidArgument("PolicyNet: embed_dim must be >= 1");
  if (config.heads < 1 || config.embed_dim % config.heads != 0) {
    return Status::InvalidArgument("PolicyNet: heads must be >= 1 and divide embed_dim (" +
                                   std::to_string(config.embed_dim) + " % " +
                                   std::to_string(config.heads) + " != 0)");
  }
  if (config.mlp_hidden < 1) return Status::InvalidArgument("PolicyNet: mlp_hidden must be >= 1");
  StatusOr<HeadLayout> layout = HeadLayout::Make(config.head_sizes);
  if (!layout.ok()) return Status::InvalidArgument("PolicyNet: " + layout.status().message());
  const int k = layout->total();
  PolicyNet net;
  net.config_ = config;
  net.layout_ = std::move(layout).value();
  net.k_ = k;
  const int d = config.embed_dim;
  net.embed_ = Linear(config.input_dim, d);
  net.block_ = EncoderBlock(d, config.heads, config.mlp_hidden);
  net.fc_a_ = Linear(d, d);
  net.fc_b_ = Linear(d, k);
  net.logits_ = Vec::Zero(k);
  net.Reinitialize(config.seed);
  return net;
}

void PolicyNet::Reinitialize(std::uint64_t seed) {
  config_.seed = seed;
  Rng rng(seed);
  embed_.Init(rng);
  block_.Init(rng);
  fc_a_.Init(rng);
  fc_b_.Init(rng, kLogitsInitGain);
  has_forward_ = false;
}

Status PolicyNet::Forward(const ConstMatRef& obs) {
  if (obs.rows() < 1 || obs.cols() != config_.input_dim) {
    return Status::InvalidArgument("PolicyNet::Forward: obs is [" + std::to_string(obs.rows()) +
                                   ", " + std::to_string(obs.cols()) + "], expected [T >= 1, " +
                                   std::to_string(config_.input_dim) + "]");
  }
  embed_.Forward(obs, &e_);
  block_.Forward(e_, &z_);
  pool_.Forward(z_, &p_);
  fc_a_.Forward(p_, &u_);
  if (config_.mlp_activation == Activation::kGelu) {
    gelu_.Forward(u_, &a_);
  } else {
    relu_.Forward(u_, &a_);
  }
  fc_b_.Forward(a_, &out_);
  logits_ = out_.row(0).transpose();
  has_forward_ = true;
  return Status::Ok();
}

Status PolicyNet::Backward(const Vec& dlogits) {
  if (!has_forward_) return Status::InvalidArgument("PolicyNet::Backward: no Forward to backprop");
  if (dlogits.size() != k_) {
    return Status::InvalidArgument("PolicyNet::Backward: dlogits has " +
                                   std::to_string(dlogits.size()) + " entries, expected " +
                                   std::to_string(k_));
  }
  dout_.resize(1, k_);
  dout_.row(0) = dlogits.transpose();
  fc_b_.Backward(dout_, &da_);
  if (config_.mlp_activation == Activation::kGelu) {
    gelu_.Backward(da_, &du_);
  } else {
    relu_.Backward(da_, &du_);
  }
  fc_a_.Backward(du_, &dp_);
  pool_.Backward(dp_, &dz_);
  block_.Backward(dz_, &de_);
  embed_.Backward(de_, nullptr);
  return Status::Ok();
}

std::vector<ParamRef> PolicyNet::Params() {
  std::vector<ParamRef> params;
  embed_.CollectParams("embed", &params);
  block_.CollectParams("block", &params);
  fc_a_.CollectParams("head_mlp.fc_a", &params);
  fc_b_.CollectParams("head_mlp.fc_b", &params);
  return params;
}

void PolicyNet::ZeroGrad() {
  embed_.ZeroGrad();
  block_.ZeroGrad();
  fc_a_.ZeroGrad();
  fc_b_.ZeroGrad();
}

}  // namespace l2s::nn
