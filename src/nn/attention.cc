#include "nn/attention.h"

#include <cassert>
#include <cmath>

namespace l2s::nn {

// ---------------------------------------------------------------------------- MultiHeadAttention

MultiHeadAttention::MultiHeadAttention(int dim, int heads)
    : dim_(dim), heads_(heads), qkv_(dim, 3 * dim), proj_(dim, dim) {
  assert(heads > 0 && dim % heads == 0);
}

void MultiHeadAttention::Init(Rng& rng) {
  qkv_.Init(rng);
  proj_.Init(rng);
}

void MultiHeadAttention::Forward(const ConstMatRef& x, Mat* y) {
  const Eigen::Index t_rows = x.rows();
  const Eigen::Index d = dim_;
  const Eigen::Index dh = d / heads_;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  qkv_.Forward(x, &qkv_out_);  // [T, 3d]
  probs_.resize(heads_ * t_rows, t_rows);
  o_.resize(t_rows, d);
  for (int h = 0; h < heads_; ++h) {
    const auto q = qkv_out_.middleCols(h * dh, dh);          // [T, dh]
    const auto k = qkv_out_.middleCols(d + h * dh, dh);      // [T, dh]
    const auto v = qkv_out_.middleCols(2 * d + h * dh, dh);  // [T, dh]
    auto p = probs_.middleRows(h * t_rows, t_rows);          // [T, T]
    p.noalias() = scale * (q * k.transpose());
    for (Eigen::Index i = 0; i < t_rows; ++i) {  // numerically stable row softmax
      const double mx = p.row(i).maxCoeff();
      p.row(i) = (p.row(i).array() - mx).exp();
      p.row(i) /= p.row(i).sum();
    }
    o_.middleCols(h * dh, dh).noalias() = p * v;
  }
  proj_.Forward(o_, y);
}

// Per head, with S the pre-softmax scores:
//   dP = dO_h V_h^T,  dV_h = P^T dO_h,  dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik),
//   dQ_h = scale dS K_h,  dK_h = scale dS^T Q_h.
void MultiHeadAttention::Backward(const ConstMatRef& dy, Mat* dx) {
  const Eigen::Index t_rows = o_.rows();
  const Eigen::Index d = dim_;
  const Eigen::Index dh = d / heads_;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  proj_.Backward(dy, &do_);  // [T, d]
  dqkv_.resize(t_rows, 3 * d);
  dp_.resize(t_rows, t_rows);
  ds_.resize(t_rows, t_rows);
  for (int h = 0; h < heads_; ++h) {
    const auto q = qkv_out_.middleCols(h * dh, dh);
    const auto k = qkv_out_.middleCols(d + h * dh, dh);
    const auto v = qkv_out_.middleCols(2 * d + h * dh, dh);
    const auto p = probs_.middleRows(h * t_rows, t_rows);
    const auto do_h = do_.middleCols(h * dh, dh);
    dp_.noalias() = do_h * v.transpose();                               // [T, T]
    dqkv_.middleCols(2 * d + h * dh, dh).noalias() = p.transpose() * do_h;  // dV [T, dh]
    for (Eigen::Index i = 0; i < t_rows; ++i) {
      const double s = p.row(i).dot(dp_.row(i));
      ds_.row(i) = p.row(i).array() * (dp_.row(i).array() - s);
    }
    dqkv_.middleCols(h * dh, dh).noalias() = scale * (ds_ * k);                // dQ [T, dh]
    dqkv_.middleCols(d + h * dh, dh).noalias() = scale * (ds_.transpose() * q);  // dK [T, dh]
  }
  qkv_.Backward(dqkv_, dx);
}

void MultiHeadAttention::CollectParams(const std::string& prefix, std::vector<ParamRef>* out) {
  qkv_.CollectParams(prefix + ".qkv", out);
  proj_.CollectParams(prefix + ".proj", out);
}

void MultiHeadAttention::ZeroGrad() {
  qkv_.ZeroGrad();
  proj_.ZeroGrad();
}

// ---------------------------------------------------------------------------------- EncoderBlock

EncoderBlock::EncoderBlock(int dim, int heads, int mlp_hidden)
    : ln1_(dim), ln2_(dim), attn_(dim, heads), fc1_(dim, mlp_hidden), fc2_(mlp_hidden, dim) {}

void EncoderBlock::Init(Rng& rng) {
  ln1_.Init();
  ln2_.Init();
  attn_.Init(rng);
  fc1_.Init(rng);
  fc2_.Init(rng);
}

void EncoderBlock::Forward(const ConstMatRef& x, Mat* y) {
  ln1_.Forward(x, &a_);
  attn_.Forward(a_, &m_);
  AddResidual(x, m_, &x1_);
  ln2_.Forward(x1_, &b_);
  fc1_.Forward(b_, &h_);
  gelu_.Forward(h_, &g_);
  fc2_.Forward(g_, &f_);
  AddResidual(x1_, f_, y);
}

void EncoderBlock::Backward(const ConstMatRef& dy, Mat* dx) {
  // y = x1 + f: dx1 = dy + (MLP branch), df = dy.
  fc2_.Backward(dy, &dg_);
  gelu_.Backward(dg_, &dh_);
  fc1_.Backward(dh_, &db_);
  ln2_.Backward(db_, &dtmp_);
  dx1_.resize(dy.rows(), dy.cols());
  dx1_.noalias() = dy + dtmp_;
  // x1 = x + m: dx = dx1 + (attention branch).
  attn_.Backward(dx1_, &dtmp_);
  if (dx == nullptr) {
    ln1_.Backward(dtmp_, nullptr);
    return;
  }
  ln1_.Backward(dtmp_, &db_);
  dx->resize(dy.rows(), dy.cols());
  dx->noalias() = dx1_ + db_;
}

void EncoderBlock::CollectParams(const std::string& prefix, std::vector<ParamRef>* out) {
  ln1_.CollectParams(prefix + ".ln1", out);
  attn_.CollectParams(prefix + ".attn", out);
  ln2_.CollectParams(prefix + ".ln2", out);
  fc1_.CollectParams(prefix + ".fc1", out);
  fc2_.CollectParams(prefix + ".fc2", out);
}

void EncoderBlock::ZeroGrad() {
  ln1_.ZeroGrad();
  attn_.ZeroGrad();
  ln2_.ZeroGrad();
  fc1_.ZeroGrad();
  fc2_.ZeroGrad();
}

}  // namespace l2s::nn
