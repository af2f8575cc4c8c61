#include "search/sampling.h"

#include <cassert>
#include <limits>

namespace l2s {

int Rng::Uniform(int n) {
  assert(n >= 1);
  const uint64_t un = static_cast<uint64_t>(n);
  // Largest multiple of n representable: draws at or above it are rejected.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % un;
  uint64_t x = gen_();
  while (x >= limit) x = gen_();
  return static_cast<int>(x % un);
}

void MaskedSampler::FillMask(std::span<const int> idx, int h) {
  mask_.assign(space_.head_size(h), 0);
  space_.Mask(idx.subspan(0, h), h, mask_);
}

int MaskedSampler::PickValid(Rng& rng, int exclude) {
  int n = 0;
  for (int i = 0; i < static_cast<int>(mask_.size()); ++i) n += (mask_[i] && i != exclude) ? 1 : 0;
  if (n == 0) return -1;
  int k = rng.Uniform(n);
  for (int i = 0; i < static_cast<int>(mask_.size()); ++i) {
    if (!mask_[i] || i == exclude) continue;
    if (k-- == 0) return i;
  }
  return -1;
}

bool MaskedSampler::Valid(std::span<const int> idx, int h) {
  FillMask(idx, h);
  const int i = idx[h];
  return i >= 0 && i < static_cast<int>(mask_.size()) && mask_[i] != 0;
}

void MaskedSampler::Sample(Rng& rng, std::vector<int>* idx) {
  idx->assign(space_.num_heads(), 0);
  for (int h = 0; h < space_.num_heads(); ++h) {
    FillMask(*idx, h);
    (*idx)[h] = PickValid(rng, -1);
    assert((*idx)[h] >= 0);  // Mask guarantees every prefix it allows is completable
  }
}

void MaskedSampler::Repair(Rng& rng, std::vector<int>* idx, int from) {
  for (int h = from; h < space_.num_heads(); ++h) {
    if (Valid(*idx, h)) continue;
    (*idx)[h] = PickValid(rng, -1);  // mask_ already filled by Valid
    assert((*idx)[h] >= 0);
  }
}

bool MaskedSampler::MoveOne(Rng& rng, std::vector<int>* idx) {
  movable_.clear();
  for (int h = 0; h < space_.num_heads(); ++h) {
    FillMask(*idx, h);
    int alternatives = 0;
    for (int i = 0; i < static_cast<int>(mask_.size()); ++i)
      alternatives += (mask_[i] && i != (*idx)[h]) ? 1 : 0;
    if (alternatives > 0) movable_.push_back(h);
  }
  if (movable_.empty()) return false;
  const int h = movable_[rng.Uniform(static_cast<int>(movable_.size()))];
  FillMask(*idx, h);
  (*idx)[h] = PickValid(rng, (*idx)[h]);
  Repair(rng, idx, h + 1);
  return true;
}

void MaskedSampler::Mutate(Rng& rng, double rate, std::vector<int>* idx) {
  for (int h = 0; h < space_.num_heads(); ++h) {
    const bool valid = Valid(*idx, h);  // fills mask_ for h
    if (rng.Unit() < rate) {
      const int alt = PickValid(rng, valid ? (*idx)[h] : -1);
      if (alt >= 0) {
        (*idx)[h] = alt;
        continue;
      }
    }
    if (!valid) (*idx)[h] = PickValid(rng, -1);
  }
}

}  // namespace l2s
