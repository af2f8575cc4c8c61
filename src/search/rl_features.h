// Problem-independent features of a strategy space's options (issue 14, item 3): the input of the
// shared policy network nn::OptionScorer, whose weights are pretrained across problems
// (tools/pretrain_rl.cc) and serve any problem whatever its option lists.
//
// One row per option of every head, heads in the space's order (the searcher's flat logit
// layout), RlFeatureCount() columns: the option's own features, then the problem's.
//
// Option features (kRlOptionFeatures):
//   [0, 20)  head kind, one-hot: pp, tp, ep, batch, sp, the 12 operators (Op order), slots,
//            overlap, mtp (the same column for the same head on every problem)
//   20       pp / tp / ep: log2(degree) / log2(GPUs) (1 = the whole cluster; 0 on one GPU)
//   21       pp / tp / ep: log2(degree) / 10; batch: log2(sequences per dp rank) / 10
//   22       position in the head's option list, i / (n - 1) (0 for a single option)
//   23-25    operator dims: dim0, dim1, none
//   26       sp: on
//   27       slots: redundant fraction (slots - E) / E x 4 (0 for one slot per expert; E + E/8
//            -> 0.5, E + E/4 -> 1)
//   28-30    overlap: none, tbo, sbo
//   31       mtp: speculative tokens / 3
// Problem features (kRlProblemFeatures), the same on every row:
//   0-2      mode: decode, prefill, serve
//   3        log2(GPUs) / 10
//   4        MoE (routed experts)
//   5        MLA attention
//   6        log2(routed experts + 1) / 9
//   7, 8     log10(total parameters) / 12, log10(active parameters) / 12
//   9        log2(weight bytes / one GPU's HBM) / 10 (how many GPUs the weights need)
//   10       log2(decode context or prompt length) / 17
//   11       an SLO is set (TTFT or TPOT)
//   12       log2(peak FLOP/s / HBM bytes/s) / 10 (the GPU's compute-to-bandwidth ratio)
//   13       layers / 128
// Scales put every column in about [-1, 1] on the presets; they are units, not fitted constants.
#pragma once

#include <vector>

#include "nn/tensor.h"
#include "sim/simulator.h"
#include "strategy/space.h"

namespace l2s {

inline constexpr int kRlOptionFeatures = 32;
inline constexpr int kRlProblemFeatures = 14;
constexpr int RlFeatureCount() { return kRlOptionFeatures + kRlProblemFeatures; }

std::vector<double> RlProblemFeatures(const Problem& p);

// [sum of head sizes, RlFeatureCount()] for `space` (a space of p's model on p's cluster).
nn::Mat RlOptionFeatures(const Problem& p, const StrategySpace& space);

}  // namespace l2s

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "nn/option_scorer.h"

namespace l2s {

// Hidden width of the shared scorer when it starts from random weights (rl warm=2); pretrained
// weights carry their own.
inline constexpr int kRlScorerHidden = 32;

// The shared policy network for one problem: an nn::OptionScorer over RlOptionFeatures(p, space),
// starting from `initial` (pretrained weights) or, when null, from random weights drawn from
// `seed` with kRlScorerHidden hidden units. Fails when `initial` was trained on another feature
// count.
StatusOr<std::unique_ptr<nn::OptionScorer>> MakeRlScorer(const Problem& p,
                                                         const StrategySpace& space,
                                                         const nn::ScorerWeights* initial,
                                                         uint64_t seed);

// The pretrained weights shipped with l2s (src/search/rl_pretrained.cc, written by
// tools/pretrain_rl), or null when none are compiled in.
const nn::ScorerWeights* PretrainedRlWeights();

}  // namespace l2s
