// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11). Element i of a dropout
// mask depends only on (seed, i), so the CPU and CUDA backends draw identical masks, backward
// passes regenerate masks instead of storing them, and a resumed run repeats them exactly.
#pragma once

#include <cstdint>

#include "core/hostdevice.h"

namespace hwt {

struct Philox4 {
  uint32_t v[4];
};

HWT_HD Philox4 philox4x32(uint64_t counter, uint64_t seed) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// Uniform in [0, 1) from the top 24 bits of one Philox output word.
HWT_HD float uniform_24(uint32_t word) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f);
}

// Uniform in [0, 1) with 24 random bits, for element `index` of the stream `seed`: word
// index % 4 of block index / 4.
HWT_HD float philox_uniform(uint64_t seed, uint64_t index) {
  return uniform_24(philox4x32(index >> 2, seed).v[index & 3]);
}

// Dropout keeps element `index` when its uniform draw is at least p.
HWT_HD bool dropout_keep(uint64_t seed, uint64_t index, float p) {
  return philox_uniform(seed, index) >= p;
}

// Keep flags of elements [begin, begin + n), one Philox call per four elements: the same
// decisions as dropout_keep, four times cheaper on the CPU.
inline void dropout_keep_range(uint64_t seed, uint64_t begin, int64_t n, float p, uint8_t* keep) {
  const uint64_t end = begin + static_cast<uint64_t>(n);
  for (uint64_t i = begin; i < end;) {
    const Philox4 r = philox4x32(i >> 2, seed);
    for (uint64_t k = i & 3; k < 4 && i < end; ++k, ++i)
      keep[i - begin] = static_cast<float>(r.v[k] >> 8) * (1.0f / 16777216.0f) >= p;
  }
}

// SplitMix64 finaliser: derives independent seeds from (base seed, step, site).
HWT_HD uint64_t mix_seed(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace hwt
