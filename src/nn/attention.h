// Multi-head self-attention and the pre-norm transformer encoder block.
//
// Same Forward/Backward contract as nn/layers.h (cache on Forward, accumulate parameter gradients
// and overwrite dx on Backward). No mask: every one of the T rows attends to every row, and T may
// change between calls (buffers are resized; no allocation while T stays the same).
#pragma once

#include <string>
#include <vector>

#include "nn/layers.h"

namespace l2s::nn {

// Self-attention over the rows of x [T, d] with `heads` heads of size dh = d / heads:
//   [Q K V] = x Wqkv^T + bqkv                              [T, 3d]
//   P_h = softmax_rows(Q_h K_h^T / sqrt(dh))               [T, T] per head
//   O = concat_h(P_h V_h)                                  [T, d]
//   y = O Wo^T + bo                                        [T, d]
class MultiHeadAttention {
 public:
  MultiHeadAttention() = default;
  // Requires dim % heads == 0 (checked by the owning network's config validation).
  MultiHeadAttention(int dim, int heads);

  void Init(Rng& rng);  // Xavier-uniform qkv and output projections, zero biases.

  void Forward(const ConstMatRef& x, Mat* y);     // x [T, d] -> y [T, d]
  void Backward(const ConstMatRef& dy, Mat* dx);  // dy [T, d] -> dx [T, d]

  void CollectParams(const std::string& prefix, std::vector<ParamRef>* out);
  void ZeroGrad();
  const Mat& attention_probs() const { return probs_; }  // [heads * T, T], head h at rows h*T..

 private:
  int dim_ = 0;
  int heads_ = 0;
  Linear qkv_;    // d -> 3d
  Linear proj_;   // d -> d
  Mat qkv_out_;   // [T, 3d]
  Mat probs_;     // [heads * T, T]
  Mat o_;         // [T, d]
  // Backward scratch.
  Mat do_;        // [T, d]
  Mat dqkv_;      // [T, 3d]
  Mat dp_;        // [T, T]
  Mat ds_;        // [T, T]
};

// Pre-norm transformer encoder block (GPT-2 ordering):
//   x1 = x + MHA(LN1(x))
//   y  = x1 + W2 GELU(W1 LN2(x1) + b1) + b2        (W1: d -> mlp_hidden, W2: mlp_hidden -> d)
class EncoderBlock {
 public:
  EncoderBlock() = default;
  EncoderBlock(int dim, int heads, int mlp_hidden);

  void Init(Rng& rng);

  void Forward(const ConstMatRef& x, Mat* y);     // x [T, d] -> y [T, d]
  void Backward(const ConstMatRef& dy, Mat* dx);  // dy [T, d] -> dx [T, d]

  void CollectParams(const std::string& prefix, std::vector<ParamRef>* out);
  void ZeroGrad();

 private:
  LayerNorm ln1_, ln2_;
  MultiHeadAttention attn_;
  Linear fc1_, fc2_;
  GELU gelu_;
  // Forward activations.
  Mat a_;    // [T, d]  LN1(x)
  Mat m_;    // [T, d]  MHA(a)
  Mat x1_;   // [T, d]  x + m
  Mat b_;    // [T, d]  LN2(x1)
  Mat h_;    // [T, H]  fc1(b)
  Mat g_;    // [T, H]  GELU(h)
  Mat f_;    // [T, d]  fc2(g)
  // Backward scratch.
  Mat dg_;   // [T, H]
  Mat dh_;   // [T, H]
  Mat db_;   // [T, d]
  Mat dx1_;  // [T, d]
  Mat dtmp_; // [T, d]
};

}  // namespace l2s::nn
