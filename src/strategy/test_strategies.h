// Strategies for tests: random structurally valid ones of a strategy space, and Megatron-dims ones
// of given degrees.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "strategy/space.h"

namespace l2s::testing {

// pp x tp x dp GPUs with ep-way experts and Megatron's dims (sp off, no slots, no overlap, no MTP).
inline Strategy MegatronStrategy(int pp, int tp, int dp, int ep = 1, int batch = 0) {
  Strategy s;
  s.pp = pp;
  s.tp = tp;
  s.dp = dp;
  s.ep = ep;
  s.batch = batch;
  s.dims = MegatronDims();
  return s;
}

// Draws every head uniformly among the choices the space's mask allows after the heads before it.
inline Strategy RandomStrategy(const StrategySpace& space, std::mt19937_64& rng) {
  std::vector<int> idx(space.num_heads());
  std::vector<uint8_t> mask;
  for (int h = 0; h < space.num_heads(); ++h) {
    mask.assign(space.head_size(h), 0);
    space.Mask(std::span<const int>(idx.data(), h), h, mask);
    std::vector<int> ok;
    for (int i = 0; i < space.head_size(h); ++i)
      if (mask[i]) ok.push_back(i);
    idx[h] = ok[rng() % ok.size()];
  }
  return space.Decode(idx);
}

}  // namespace l2s::testing
