// Self-contained random numbers for data order. std::shuffle and std distributions differ
// between standard libraries; these give the same order everywhere, so a run and its resume
// (or a run on another machine) see identical batches.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace hwt {

// splitmix64 (Steele et al., 2014): a small generator whose seeds may be consecutive integers.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) without modulo bias (rejects the short last block).
  uint64_t below(uint64_t n) {
    const uint64_t limit = -n % n;
    for (;;) {
      const uint64_t r = next();
      if (r >= limit) return r % n;
    }
  }

 private:
  uint64_t state_;
};

// A generator for stream `stream` of `seed`, e.g. one per epoch.
inline SplitMix64 seeded_rng(uint64_t seed, uint64_t stream) {
  SplitMix64 mix(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return SplitMix64(mix.next());
}

// Fisher–Yates.
template <class T>
void shuffle_in_place(std::vector<T>& v, SplitMix64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace hwt
