// The multi-categorical PPO loss: hand-derived values, errors, a gradient check over every network
// parameter with random masks and ratios on both sides of the clip range, and a small learning
// test (one rewarded joint action must be found and locked in).
#include "nn/ppo.h"

#include <gtest/gtest.h>

#include <cmath>

#include "grad_check.h"
#include "nn/adam.h"

namespace l2s::nn {
namespace {

using gradcheck::CheckParams;
using gradcheck::GradCheckResult;
using gradcheck::RandomMat;

PolicyNet MakeNet(PolicyNetConfig c) {
  StatusOr<PolicyNet> net = PolicyNet::Create(c);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return std::move(net).value();
}

PolicyNetConfig SmallConfig() {
  PolicyNetConfig c;
  c.input_dim = 4;
  c.embed_dim = 8;
  c.heads = 2;
  c.mlp_hidden = 8;
  c.head_sizes = {3, 4};
  c.seed = 77;
  return c;
}

double CurrentLogProb(PolicyNet& net, const PolicySample& s) {
  EXPECT_TRUE(net.Forward(s.obs).ok());
  MultiCategorical d;
  EXPECT_TRUE(d.Set(net.layout(), std::span<const double>(net.logits().data(), 7), s.mask).ok());
  return *d.LogProb(s.actions);
}

TEST(PpoLoss, OnPolicyValueIsMinusAdvantageMinusEntropyBonus) {
  // r = 1 when old_log_prob is the current log-prob: L = -A - c_ent * H, KL 0, nothing clipped.
  PolicyNet net = MakeNet(SmallConfig());
  Rng rng(1);
  PolicySample s{RandomMat(rng, 3, 4), {1, 2}, {}, 0.0, 0.7, {}};
  s.old_log_prob = CurrentLogProb(net, s);
  MultiCategorical d;
  ASSERT_TRUE(d.Set(net.layout(), std::span<const double>(net.logits().data(), 7), {}).ok());
  PpoConfig cfg;
  cfg.entropy_coef = 0.05;
  const std::vector<PolicySample> batch = {s};
  StatusOr<PpoStats> st = PpoLoss(net, batch, cfg);
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->policy_loss, -0.7, 1e-14);
  EXPECT_NEAR(st->mean_entropy, d.TotalEntropy(), 1e-14);
  EXPECT_NEAR(st->loss, -0.7 - 0.05 * d.TotalEntropy(), 1e-14);
  EXPECT_NEAR(st->approx_kl, 0.0, 1e-14);
  EXPECT_EQ(st->clip_fraction, 0.0);
}

TEST(PpoLoss, ClippedValueHandComputed) {
  // log-ratio ln 2 (r = 2), A = 1, eps = 0.2: min(2, 1.2) = 1.2 -> policy loss -1.2.
  // log-ratio ln 0.5 (r = 0.5), A = -1: min(-0.5, -0.8) = -0.8 -> policy loss +0.8.
  PolicyNet net = MakeNet(SmallConfig());
  Rng rng(2);
  PolicySample a{RandomMat(rng, 2, 4), {0, 3}, {}, 0.0, 1.0, {}};
  a.old_log_prob = CurrentLogProb(net, a) - std::log(2.0);
  PolicySample b{RandomMat(rng, 2, 4), {2, 1}, {}, 0.0, -1.0, {}};
  b.old_log_prob = CurrentLogProb(net, b) - std::log(0.5);
  const std::vector<PolicySample> batch = {a, b};
  StatusOr<PpoStats> st = PpoLoss(net, batch, PpoConfig{});
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->policy_loss, 0.5 * (-1.2 + 0.8), 1e-12);
  EXPECT_EQ(st->clip_fraction, 1.0);
  // k3 estimator: 0.5 * ((2 - 1 - ln 2) + (0.5 - 1 + ln 2)).
  EXPECT_NEAR(st->approx_kl, 0.5 * ((1.0 - std::log(2.0)) + (-0.5 + std::log(2.0))), 1e-12);
  // Both samples sit on the clipped branch: no gradient at all.
  net.ZeroGrad();
  ASSERT_TRUE(PpoLossAndGrad(net, batch, PpoConfig{}).ok());
  EXPECT_EQ(GlobalGradNorm(net.Params()), 0.0);
}

// A logit offset enters the softmax beside the network's logits: the same sample with an offset
// that favours its action has a higher current log-probability, hence a ratio of exp(gain) with
// the same old_log_prob (hand-derived: head 0 of 3 options gets +ln 3 on the chosen option, so
// p' = 3p / (3p + 1 - p)); an offset constant over a head changes nothing; a wrong size is an
// error.
TEST(PpoLoss, LogitOffsetEntersTheSoftmax) {
  PolicyNet net = MakeNet(SmallConfig());
  Rng rng(5);
  PolicySample s{RandomMat(rng, 3, 4), {1, 2}, {}, 0.0, 1.0, {}};
  s.old_log_prob = CurrentLogProb(net, s);
  MultiCategorical d;
  ASSERT_TRUE(d.Set(net.layout(), std::span<const double>(net.logits().data(), 7), {}).ok());
  const double p = d.probs()[1];  // head 0, option 1
  const double p_new = 3 * p / (3 * p + 1 - p);
  PolicySample favoured = s;
  favoured.logit_offset = Vec::Zero(7);
  favoured.logit_offset[1] = std::log(3.0);
  PpoConfig wide;
  wide.clip_eps = 10;  // no clipping: policy loss = -r A
  StatusOr<PpoStats> st = PpoLoss(net, std::vector<PolicySample>{favoured}, wide);
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->policy_loss, -p_new / p, 1e-12);
  PolicySample shifted = s;
  shifted.logit_offset = Vec::Zero(7);
  for (int i = 3; i < 7; ++i) shifted.logit_offset[i] = 2.5;  // all of head 1
  st = PpoLoss(net, std::vector<PolicySample>{shifted}, wide);
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->policy_loss, -1.0, 1e-12);
  shifted.logit_offset = Vec::Zero(6);
  EXPECT_FALSE(PpoLoss(net, std::vector<PolicySample>{shifted}, wide).ok());
}

TEST(PpoLoss, RejectsBadInput) {
  PolicyNet net = MakeNet(SmallConfig());
  Rng rng(3);
  const PpoConfig cfg;
  EXPECT_FALSE(PpoLossAndGrad(net, {}, cfg).ok());  // empty batch
  PolicySample s{RandomMat(rng, 3, 4), {1, 2}, {}, 0.0, 1.0, {}};
  s.mask = {true, false, true, true, true, true, true};  // action 1 of head 0 masked
  EXPECT_FALSE(PpoLossAndGrad(net, std::vector<PolicySample>{s}, cfg).ok());
  s.mask = {};
  s.actions = {1};  // wrong head count
  EXPECT_FALSE(PpoLossAndGrad(net, std::vector<PolicySample>{s}, cfg).ok());
  s.actions = {1, 4};  // out of range
  EXPECT_FALSE(PpoLossAndGrad(net, std::vector<PolicySample>{s}, cfg).ok());
  s.actions = {1, 2};
  s.obs = Mat::Zero(3, 5);  // wrong A
  EXPECT_FALSE(PpoLossAndGrad(net, std::vector<PolicySample>{s}, cfg).ok());
  s.obs = Mat::Zero(3, 4);
  s.mask = {false, false, false, true, true, true, true};  // head 0 all masked
  EXPECT_FALSE(PpoLossAndGrad(net, std::vector<PolicySample>{s}, cfg).ok());
}

// Every parameter, 6 samples with random T, masks, actions, advantages of both signs and
// log-ratios in {+-0.05 (inside the clip range), +-0.6 (outside)}, entropy bonus on.
// Tolerance as for the whole PolicyNet (1e-5 relative).
constexpr double kTolPpo = 1e-5;

TEST(PpoLoss, GradCheckAllParams) {
  PolicyNet net = MakeNet(SmallConfig());
  Rng rng(4);
  std::vector<ParamRef> params = net.Params();
  for (const ParamRef& p : params) {
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] += rng.Uniform(-0.3, 0.3);
  }
  const HeadLayout& layout = net.layout();
  std::vector<PolicySample> batch;
  const double log_ratios[] = {0.05, -0.05, 0.6, -0.6};
  for (int i = 0; i < 6; ++i) {
    PolicySample s;
    s.obs = RandomMat(rng, 1 + i % 3, 4);
    s.mask.assign(layout.total(), true);
    for (int h = 0; h < layout.num_heads(); ++h) {
      for (int j = 0; j < layout.size(h); ++j) s.mask[layout.offset(h) + j] = rng.Uniform() < 0.7;
      s.mask[layout.offset(h) + i % layout.size(h)] = true;
      s.actions.push_back(i % layout.size(h));
    }
    s.advantage = (i % 2 == 0 ? 1.0 : -1.0) * rng.Uniform(0.2, 1.5);
    s.old_log_prob = CurrentLogProb(net, s) - log_ratios[(i / 2) % 4];
    batch.push_back(s);
  }
  PpoConfig cfg;
  cfg.entropy_coef = 0.1;
  auto f = [&] { return PpoLoss(net, batch, cfg)->loss; };
  net.ZeroGrad();
  StatusOr<PpoStats> st = PpoLossAndGrad(net, batch, cfg);
  ASSERT_TRUE(st.ok());
  EXPECT_GT(st->clip_fraction, 0.0);  // both branches are exercised
  EXPECT_LT(st->clip_fraction, 1.0);
  EXPECT_NEAR(st->loss, f(), 1e-14);
  GradCheckResult res;
  CheckParams(f, params, &res);
  EXPECT_LT(res.max_err, kTolPpo) << res.worst;
}

// Learning test. Three heads (3 x 4 x 5 = 60 joint actions); only `target` earns reward 1.
// Each update: 8 actions sampled from the current policy on a fixed observation, advantage =
// reward - running mean of all past rewards, 2 Adam steps (lr 1e-3, the paper's) on the PPO loss
// (a tiny buffer and 2 gradient steps, like the paper's PPO). The policy must put > 0.95 on the
// rewarded option of every head within kMaxUpdates updates. Returns the update count, or -1.
int UpdatesToLearnRewardedAction(std::uint64_t seed, const std::vector<int>& target) {
  PolicyNetConfig c;
  c.input_dim = 6;
  c.embed_dim = 32;
  c.heads = 4;
  c.mlp_hidden = 32;
  c.head_sizes = {3, 4, 5};
  c.seed = seed;
  PolicyNet net = MakeNet(c);
  StatusOr<Adam> adam = Adam::Create(net.Params());
  EXPECT_TRUE(adam.ok());
  Rng rng(seed + 1);
  const Mat obs = RandomMat(rng, 3, 6);
  constexpr int kMaxUpdates = 300;
  constexpr int kBatch = 8;
  constexpr double kLr = 1e-3;
  const PpoConfig cfg;
  PpoWorkspace ws;
  MultiCategorical dist;
  double reward_sum = 0.0;
  int reward_count = 0;
  std::vector<PolicySample> batch(kBatch);
  for (int update = 0; update < kMaxUpdates; ++update) {
    EXPECT_TRUE(net.Forward(obs).ok());
    EXPECT_TRUE(dist.Set(net.layout(), std::span<const double>(net.logits().data(), 12), {}).ok());
    bool all_confident = true;
    for (int h = 0; h < 3; ++h) {
      all_confident &= dist.probs()[net.layout().offset(h) + target[h]] > 0.95;
    }
    if (all_confident) return update;
    const double baseline = reward_count > 0 ? reward_sum / reward_count : 0.0;
    for (PolicySample& s : batch) {
      s.obs = obs;
      s.actions.resize(3);
      for (int h = 0; h < 3; ++h) s.actions[h] = dist.Sample(h, rng.Uniform());
      s.old_log_prob = *dist.LogProb(s.actions);
      const double reward = s.actions == target ? 1.0 : 0.0;
      s.advantage = reward - baseline;
      reward_sum += reward;
      ++reward_count;
    }
    for (int epoch = 0; epoch < 2; ++epoch) {
      net.ZeroGrad();
      EXPECT_TRUE(PpoLossAndGrad(net, batch, cfg, &ws).ok());
      adam->Step(kLr);
    }
  }
  return -1;
}

TEST(PpoLearning, FindsTheSingleRewardedJointAction) {
  // Three fixed seeds and targets (observed 25, 35 and 41 updates; the bound of 300 leaves ~7x).
  const std::pair<std::uint64_t, std::vector<int>> cases[] = {
      {2024, {2, 0, 3}}, {7, {0, 3, 4}}, {99, {1, 1, 0}}};
  for (const auto& [seed, target] : cases) {
    const int updates = UpdatesToLearnRewardedAction(seed, target);
    EXPECT_GE(updates, 0) << "seed " << seed << " did not converge";
    RecordProperty("updates_to_converge_seed_" + std::to_string(seed), updates);
  }
}

}  // namespace
}  // namespace l2s::nn
