// Deterministic pseudo-random numbers for weight initialisation and sampling.
//
// std::mt19937_64's output sequence is fixed by the C++ standard; the conversion to doubles is done
// here by hand (top 53 bits * 2^-53) rather than with std::uniform_real_distribution, whose
// algorithm is implementation-defined. Same seed -> bit-identical streams on every platform.
#pragma once

#include <cstdint>
#include <random>

namespace l2s::nn {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform double in [0, 1), 53 random bits.
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Uniform double in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  std::uint64_t NextU64() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace l2s::nn
