// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014): the generator's increment and its output mix, a bijection of 64 bits whose outputs for
// nearby inputs look independent. Seeds of independent streams are derived with it.
#pragma once

#include <cstdint>

namespace l2s {

// The generator adds this to its state before each output.
inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// The output mix of one state value.
inline uint64_t SplitMix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace l2s
