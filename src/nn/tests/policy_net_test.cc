// PolicyNet: config validation, whole-network gradient check, determinism, restarts, invariance
// to the order of the elite rows, and varying row counts.
#include "nn/policy_net.h"

#include <gtest/gtest.h>

#include "grad_check.h"

namespace l2s::nn {
namespace {

using gradcheck::GradCheckResult;
using gradcheck::RandomMat;

PolicyNetConfig SmallConfig(std::uint64_t seed = 1) {
  PolicyNetConfig c;
  c.input_dim = 5;
  c.embed_dim = 8;
  c.heads = 2;
  c.mlp_hidden = 12;
  c.head_sizes = {3, 2, 4};
  c.seed = seed;
  return c;
}

PolicyNet MakeNet(const PolicyNetConfig& c) {
  StatusOr<PolicyNet> net = PolicyNet::Create(c);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return std::move(net).value();
}

TEST(PolicyNet, RejectsBadConfigs) {
  PolicyNetConfig c = SmallConfig();
  c.input_dim = 0;
  EXPECT_FALSE(PolicyNet::Create(c).ok());
  c = SmallConfig();
  c.heads = 3;  // 8 % 3 != 0
  EXPECT_FALSE(PolicyNet::Create(c).ok());
  c = SmallConfig();
  c.head_sizes = {};
  EXPECT_FALSE(PolicyNet::Create(c).ok());
  c = SmallConfig();
  c.head_sizes = {2, 0};
  EXPECT_FALSE(PolicyNet::Create(c).ok());
  c = SmallConfig();
  c.mlp_hidden = 0;
  EXPECT_FALSE(PolicyNet::Create(c).ok());
  c = SmallConfig();
  c.embed_dim = 0;
  EXPECT_FALSE(PolicyNet::Create(c).ok());
}

TEST(PolicyNet, ShapeErrorsAreStatuses) {
  PolicyNet net = MakeNet(SmallConfig());
  EXPECT_FALSE(net.Backward(Vec::Zero(9)).ok());  // no Forward yet
  EXPECT_FALSE(net.Forward(Mat::Zero(3, 4)).ok());  // A mismatch
  EXPECT_FALSE(net.Forward(Mat::Zero(0, 5)).ok());  // T = 0
  ASSERT_TRUE(net.Forward(Mat::Zero(3, 5)).ok());
  EXPECT_EQ(net.logits().size(), 9);
  EXPECT_EQ(net.num_logits(), 9);
  EXPECT_EQ(net.layout().num_heads(), 3);
  EXPECT_FALSE(net.Backward(Vec::Zero(8)).ok());
  EXPECT_TRUE(net.Backward(Vec::Zero(9)).ok());
}

TEST(PolicyNet, ParameterCountMatchesArchitecture) {
  // embed 5*8+8, block: 2 LN (2*8 each), qkv 8*24+24, proj 8*8+8, fc1 8*12+12, fc2 12*8+8,
  // head MLP 8*8+8 and 8*9+9.
  PolicyNet net = MakeNet(SmallConfig());
  const std::size_t expected = (5 * 8 + 8) + 2 * 16 + (8 * 24 + 24) + (8 * 8 + 8) +
                               (8 * 12 + 12) + (12 * 8 + 8) + (8 * 8 + 8) + (8 * 9 + 9);
  EXPECT_EQ(CountParams(net.Params()), expected);
}

// Whole-network check: every parameter, loss = logits . r, both MLP activations, T = 3 and 1.
// Six chained layers in double; tolerance 1e-5 relative (observed ~1e-8).
constexpr double kTolPolicyNet = 1e-5;

TEST(PolicyNet, GradCheckAllParams) {
  for (Activation act : {Activation::kGelu, Activation::kRelu}) {
    for (int t_rows : {3, 1}) {
      PolicyNetConfig c = SmallConfig(17);
      c.mlp_activation = act;
      PolicyNet net = MakeNet(c);
      Rng rng(23 + t_rows);
      std::vector<ParamRef> params = net.Params();
      // Move away from the init (LN at identity, tiny logits layer) so every path carries signal.
      for (const ParamRef& p : params) {
        for (std::size_t i = 0; i < p.size; ++i) p.value[i] += rng.Uniform(-0.3, 0.3);
      }
      const Mat obs = RandomMat(rng, t_rows, 5);
      const Vec r = RandomMat(rng, 9, 1);
      const GradCheckResult res = gradcheck::CheckPolicyModel(net, obs, r);
      EXPECT_EQ(static_cast<std::size_t>(res.checked), CountParams(params));
      EXPECT_LT(res.max_err, kTolPolicyNet)
          << (act == Activation::kGelu ? "gelu" : "relu") << " T=" << t_rows << " " << res.worst;
    }
  }
}

TEST(PolicyNet, SameSeedSameWeightsAndOutputs) {
  PolicyNet a = MakeNet(SmallConfig(99));
  PolicyNet b = MakeNet(SmallConfig(99));
  PolicyNet c = MakeNet(SmallConfig(100));
  const std::vector<ParamRef> pa = a.Params(), pb = b.Params(), pc = c.Params();
  bool any_diff = false;
  for (std::size_t k = 0; k < pa.size(); ++k) {
    for (std::size_t i = 0; i < pa[k].size; ++i) {
      ASSERT_EQ(pa[k].value[i], pb[k].value[i]) << pa[k].name;
      any_diff |= pa[k].value[i] != pc[k].value[i];
    }
  }
  EXPECT_TRUE(any_diff);
  Rng rng(3);
  const Mat obs = RandomMat(rng, 3, 5);
  ASSERT_TRUE(a.Forward(obs).ok());
  ASSERT_TRUE(b.Forward(obs).ok());
  EXPECT_TRUE(a.logits() == b.logits());  // bitwise
}

TEST(PolicyNet, ReinitializeMatchesFreshNetwork) {
  PolicyNet a = MakeNet(SmallConfig(5));
  Rng rng(4);
  const Mat obs = RandomMat(rng, 2, 5);
  // Disturb a (weights and grads), then re-initialise from seed 6.
  for (const ParamRef& p : a.Params()) {
    for (std::size_t i = 0; i < p.size; ++i) {
      p.value[i] += 1.0;
      p.grad[i] = 2.0;
    }
  }
  a.Reinitialize(6);
  PolicyNet fresh = MakeNet(SmallConfig(6));
  ASSERT_TRUE(a.Forward(obs).ok());
  ASSERT_TRUE(fresh.Forward(obs).ok());
  EXPECT_TRUE(a.logits() == fresh.logits());
  for (const ParamRef& p : a.Params()) {
    for (std::size_t i = 0; i < p.size; ++i) ASSERT_EQ(p.grad[i], 0.0) << p.name;
  }
}

TEST(PolicyNet, InvariantToElitePermutation) {
  // Encoder block is permutation-equivariant and the mean pool symmetric, so the logits do not
  // depend on the order of the T rows.
  PolicyNet net = MakeNet(SmallConfig(8));
  Rng rng(8);
  const Mat obs = RandomMat(rng, 3, 5);
  Mat swapped(3, 5);
  swapped << obs.row(2), obs.row(0), obs.row(1);
  ASSERT_TRUE(net.Forward(obs).ok());
  const Vec l1 = net.logits();
  ASSERT_TRUE(net.Forward(swapped).ok());
  EXPECT_LT((net.logits() - l1).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(PolicyNet, VaryingRowCountsGiveFreshResults) {
  // Interleaving T = 1, 3, 2 on one network must give exactly what separate networks give.
  Rng rng(12);
  const Mat o1 = RandomMat(rng, 1, 5), o3 = RandomMat(rng, 3, 5), o2 = RandomMat(rng, 2, 5);
  PolicyNet shared = MakeNet(SmallConfig(12));
  Vec expected[3];
  const Mat* obs[3] = {&o1, &o3, &o2};
  for (int i = 0; i < 3; ++i) {
    PolicyNet fresh = MakeNet(SmallConfig(12));
    ASSERT_TRUE(fresh.Forward(*obs[i]).ok());
    expected[i] = fresh.logits();
  }
  for (int rep = 0; rep < 2; ++rep) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(shared.Forward(*obs[i]).ok());
      EXPECT_TRUE(shared.logits() == expected[i]) << i;
    }
  }
}

TEST(PolicyNet, InitialPolicyIsNearUniform) {
  // Logits layer gain 0.01: |logit| stays far below 1, so no option starts out favoured.
  PolicyNetConfig c = SmallConfig(31);
  c.embed_dim = 64;
  c.heads = 4;
  c.mlp_hidden = 64;
  PolicyNet net = MakeNet(c);
  Rng rng(31);
  ASSERT_TRUE(net.Forward(RandomMat(rng, 3, 5)).ok());
  EXPECT_LT(net.logits().cwiseAbs().maxCoeff(), 0.1);
}

}  // namespace
}  // namespace l2s::nn
