// Masked sampling over an encoded space (a StrategySpace or the disaggregated joint space), shared by the baselines: every proposal they make is
// structurally valid (StrategySpace::Mask's guarantee). Deterministic for a seed on every
// platform (std::mt19937_64 is fully specified; no std::*_distribution, whose algorithms are
// implementation-defined).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "strategy/encoded_space.h"

namespace l2s {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  // Uniform integer in [0, n), n >= 1 (rejection sampling: no modulo bias).
  int Uniform(int n);
  // Uniform double in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 gen_;
};

class MaskedSampler {
 public:
  explicit MaskedSampler(const EncodedSpace& space) : space_(space) {}

  // True when option idx[h] of head h is valid given heads 0..h-1 of idx.
  bool Valid(std::span<const int> idx, int h);
  // Samples every head in order, uniformly among the options the mask allows.
  void Sample(Rng& rng, std::vector<int>* idx);
  // Re-samples (uniformly among the valid options) every head >= from whose option is invalid
  // given the heads before it; valid heads are kept.
  void Repair(Rng& rng, std::vector<int>* idx, int from = 0);
  // One-sub-action move: picks uniformly a head that has another valid option given the heads
  // before it, changes it to one of those uniformly, then repairs the later heads. Returns false
  // (idx unchanged) when no head has an alternative.
  bool MoveOne(Rng& rng, std::vector<int>* idx);
  // GA mutation: walks the heads in order; with probability `rate` a head moves to another
  // option valid given the heads before it (when it has one); a head whose option became
  // invalid is re-sampled.
  void Mutate(Rng& rng, double rate, std::vector<int>* idx);

 private:
  // Fills mask_ for head h given idx[0..h).
  void FillMask(std::span<const int> idx, int h);
  // Uniform option allowed by mask_ other than `exclude` (-1: none excluded); -1 if none.
  int PickValid(Rng& rng, int exclude);

  const EncodedSpace& space_;
  std::vector<uint8_t> mask_;
  std::vector<int> movable_;
};

}  // namespace l2s
