// Rng: the only source of randomness for the scheduler core.
//
// A seeded 64-bit Mersenne Twister with the few draws the scheduler needs. Core code never uses
// std::random_device or a global generator; the same seed reproduces a run bit for bit
// (the draws below are implemented here, not by std:: distributions, whose output differs
// between standard libraries). Not thread-safe: one Rng per scheduling thread.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace tessera {

class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed), engine_(seed) {}

  uint64_t seed() const { return seed_; }

  // A uniform integer in [0, n). REQUIRES: n > 0. Unbiased (rejection sampling).
  uint64_t Uniform(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = engine_();
    } while (x >= limit);
    return x % n;
  }

  // A uniform double in [0, 1).
  double UniformDouble() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  // Fisher–Yates shuffle, deterministic for a given seed and input.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[Uniform(i)]);
    }
  }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

}  // namespace tessera
