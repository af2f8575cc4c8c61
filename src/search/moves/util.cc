#include <cstdlib>

#include "search/moves/move.h"

namespace l2s::moves {

std::vector<int> ValidOptions(const EncodedSpace& space, std::span<const int> idx, int h) {
  std::vector<uint8_t> mask(space.head_size(h), 0);
  space.Mask(idx.first(h), h, mask);
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(mask.size()); ++i)
    if (mask[i]) out.push_back(i);
  return out;
}

bool RepairNearest(const EncodedSpace& space, std::vector<int>* idx, int from) {
  std::vector<uint8_t> mask;
  for (int h = from; h < space.num_heads(); ++h) {
    const int n = space.head_size(h);
    mask.assign(n, 0);
    space.Mask(std::span<const int>(*idx).first(h), h, mask);
    const int cur = (*idx)[h];
    if (cur >= 0 && cur < n && mask[cur]) continue;
    int pick = -1;
    if (space.ordinal(h)) {
      for (int d = 1; d < n && pick < 0; ++d) {
        if (cur - d >= 0 && cur - d < n && mask[cur - d]) pick = cur - d;
        else if (cur + d >= 0 && cur + d < n && mask[cur + d]) pick = cur + d;
      }
    } else {
      const int r = space.recipe_option(h, 0);
      if (r >= 0 && r < n && mask[r]) pick = r;
    }
    for (int i = 0; i < n && pick < 0; ++i)
      if (mask[i]) pick = i;
    if (pick < 0) return false;
    (*idx)[h] = pick;
  }
  return true;
}

bool ChangeHead(const EncodedSpace& space, Rng& rng, int h, bool step, std::vector<int>* idx) {
  const std::vector<int> opts = ValidOptions(space, *idx, h);
  const int cur = (*idx)[h];
  std::vector<int> pool;
  if (step && space.ordinal(h)) {
    int below = -1, above = -1;
    for (int o : opts) {
      if (o < cur) below = o;
      if (o > cur && above < 0) above = o;
    }
    if (below >= 0) pool.push_back(below);
    if (above >= 0) pool.push_back(above);
  } else {
    for (int o : opts)
      if (o != cur) pool.push_back(o);
  }
  if (pool.empty()) return false;
  (*idx)[h] = pool[rng.Uniform(static_cast<int>(pool.size()))];
  return RepairNearest(space, idx, h + 1);
}

bool ChangeOneOf(const EncodedSpace& space, Rng& rng, const std::vector<int>& heads,
                 bool mostly_step, std::vector<int>* idx) {
  if (heads.empty()) return false;
  const int h = heads[rng.Uniform(static_cast<int>(heads.size()))];
  const bool step = mostly_step && rng.Uniform(4) != 0;
  return ChangeHead(space, rng, h, step, idx);
}

bool ApplyRecipe(const EncodedSpace& space, int r, int group, std::vector<int>* idx) {
  const std::vector<int> start = *idx;
  for (int h = 0; h < space.num_heads(); ++h) {
    const int o = space.recipe_option(h, r);
    if (o < 0 || (group != -2 && space.group(h) != group)) continue;
    // Set head by head in order, each only when valid given the heads before it.
    std::vector<uint8_t> mask(space.head_size(h), 0);
    space.Mask(std::span<const int>(*idx).first(h), h, mask);
    if (mask[o]) (*idx)[h] = o;
    if (!RepairNearest(space, idx, h + 1)) return false;
  }
  return *idx != start;
}

bool IsDegreeHead(const EncodedSpace& space, int h) {
  return space.ordinal(h) && space.structural(h) && !space.batch(h);
}

bool IsOptionHead(const EncodedSpace& space, int h) {
  return space.structural(h) && !space.ordinal(h) && !space.batch(h);
}

}  // namespace l2s::moves
