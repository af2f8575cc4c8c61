// Multi-head attention and the encoder block: gradient checks at several T, hand-derived special
// cases, and permutation equivariance (no positional information enters either layer).
#include "nn/attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "grad_check.h"

namespace l2s::nn {
namespace {

using gradcheck::CheckEntries;
using gradcheck::CheckParams;
using gradcheck::GradCheckResult;
using gradcheck::Project;
using gradcheck::RandomMat;

// Smooth ops in double with h = 1e-5: truncation O(h^2) ~ 1e-10 relative; 1e-6 leaves margin for
// the longer chains of the block while still catching any wrong term (those show up as O(1)).
constexpr double kTolAttention = 1e-6;
constexpr double kTolBlock = 1e-6;

template <class Layer>
GradCheckResult GradCheckLayer(Layer& layer, Rng& rng, int t_rows, int dim, double x_scale) {
  Mat x = RandomMat(rng, t_rows, dim, x_scale);
  const Mat r = RandomMat(rng, t_rows, dim);
  Mat y, dx;
  auto f = [&] {
    layer.Forward(x, &y);
    return Project(y, r);
  };
  std::vector<ParamRef> params;
  layer.CollectParams("layer", &params);
  ZeroGrad(params);
  f();
  layer.Backward(r, &dx);
  GradCheckResult res;
  CheckParams(f, params, &res);
  const Mat dx_copy = dx;
  CheckEntries(f, x.data(), dx_copy.data(), x.size(), "x", &res);
  return res;
}

TEST(MultiHeadAttention, GradCheckVaryingRows) {
  Rng rng(101);
  MultiHeadAttention attn(8, 2);
  attn.Init(rng);
  // The same object is reused with T = 3, 1, 4: the caches must follow the row count.
  for (int t_rows : {3, 1, 4}) {
    const GradCheckResult res = GradCheckLayer(attn, rng, t_rows, 8, 1.5);
    EXPECT_EQ(res.checked, 8 * 24 + 24 + 8 * 8 + 8 + t_rows * 8);
    EXPECT_LT(res.max_err, kTolAttention) << "T=" << t_rows << " " << res.worst;
  }
}

TEST(MultiHeadAttention, SingleRowAttendsToItself) {
  // With T = 1 every softmax row is [1], so y = (x Wv^T + bv) Wo^T + bo regardless of Q and K.
  Rng rng(102);
  MultiHeadAttention attn(4, 2);
  attn.Init(rng);
  const Mat x = RandomMat(rng, 1, 4);
  Mat y;
  attn.Forward(x, &y);
  for (Eigen::Index i = 0; i < attn.attention_probs().size(); ++i) {
    EXPECT_EQ(attn.attention_probs().data()[i], 1.0);
  }
  std::vector<ParamRef> p;
  attn.CollectParams("a", &p);  // qkv.weight [12, 4], qkv.bias [12], proj.weight [4, 4], proj.bias
  const Eigen::Map<const Mat> wqkv(p[0].value, 12, 4);
  const Eigen::Map<const Vec> bqkv(p[1].value, 12);
  const Eigen::Map<const Mat> wo(p[2].value, 4, 4);
  const Eigen::Map<const Vec> bo(p[3].value, 4);
  const RowVec v = x * wqkv.bottomRows(4).transpose() + bqkv.tail(4).transpose();
  const RowVec expected = v * wo.transpose() + bo.transpose();
  EXPECT_LT((y.row(0) - expected).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(MultiHeadAttention, AttentionRowsAreDistributions) {
  Rng rng(103);
  MultiHeadAttention attn(12, 3);
  attn.Init(rng);
  const Mat x = RandomMat(rng, 5, 12, 2.0);
  Mat y;
  attn.Forward(x, &y);
  const Mat& p = attn.attention_probs();  // [3 * 5, 5]
  ASSERT_EQ(p.rows(), 15);
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    EXPECT_NEAR(p.row(i).sum(), 1.0, 1e-14);
    EXPECT_GT(p.row(i).minCoeff(), 0.0);
  }
}

// Permuting the rows of x permutes the rows of y the same way (no positions, no mask).
template <class Layer>
void ExpectPermutationEquivariant(Layer& layer, Rng& rng, int dim) {
  const Mat x = RandomMat(rng, 4, dim);
  Mat px(4, dim);
  const int perm[4] = {2, 0, 3, 1};
  for (int i = 0; i < 4; ++i) px.row(i) = x.row(perm[i]);
  Mat y, py;
  layer.Forward(x, &y);
  layer.Forward(px, &py);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT((py.row(i) - y.row(perm[i])).cwiseAbs().maxCoeff(), 1e-12) << "row " << i;
  }
}

TEST(MultiHeadAttention, PermutationEquivariant) {
  Rng rng(104);
  MultiHeadAttention attn(8, 4);
  attn.Init(rng);
  ExpectPermutationEquivariant(attn, rng, 8);
}

TEST(EncoderBlock, GradCheckVaryingRows) {
  Rng rng(201);
  EncoderBlock block(8, 2, 12);
  block.Init(rng);
  // Random LayerNorm gains/biases so their gradient paths are not at the identity.
  std::vector<ParamRef> params;
  block.CollectParams("block", &params);
  for (const ParamRef& p : params) {
    if (p.name.find(".ln") != std::string::npos) {
      for (std::size_t i = 0; i < p.size; ++i) p.value[i] += rng.Uniform(-0.5, 0.5);
    }
  }
  for (int t_rows : {2, 1, 3}) {
    const GradCheckResult res = GradCheckLayer(block, rng, t_rows, 8, 2.0);
    EXPECT_LT(res.max_err, kTolBlock) << "T=" << t_rows << " " << res.worst;
  }
}

TEST(EncoderBlock, PermutationEquivariant) {
  Rng rng(202);
  EncoderBlock block(8, 2, 16);
  block.Init(rng);
  ExpectPermutationEquivariant(block, rng, 8);
}

TEST(EncoderBlock, BackwardWithoutInputGradientMatchesParamGrads) {
  // dx == nullptr must skip only the input gradient, not the parameter gradients.
  Rng rng(203);
  EncoderBlock a(8, 2, 8);
  a.Init(rng);
  EncoderBlock b = a;
  const Mat x = RandomMat(rng, 3, 8);
  const Mat dy = RandomMat(rng, 3, 8);
  Mat y, dx;
  std::vector<ParamRef> pa, pb;
  a.CollectParams("a", &pa);
  b.CollectParams("b", &pb);
  ZeroGrad(pa);
  ZeroGrad(pb);
  a.Forward(x, &y);
  a.Backward(dy, &dx);
  b.Forward(x, &y);
  b.Backward(dy, nullptr);
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t k = 0; k < pa.size(); ++k) {
    for (std::size_t i = 0; i < pa[k].size; ++i) EXPECT_EQ(pa[k].grad[i], pb[k].grad[i]);
  }
}

}  // namespace
}  // namespace l2s::nn
