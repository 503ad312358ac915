// A fast hash of a short byte string for in-memory tables (not stable across versions: use
// core/fingerprint.h for anything stored). Words are short: it mixes 8 bytes at a time rather
// than FNV's one.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace hwt {

inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  const char* p = s.data();
  size_t n = s.size();
  const auto mix = [&h](uint64_t v) {
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    mix(v);
  }
  if (n > 0) {
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    mix(v);
  }
  return h * 0x94D049BB133111EBull;
}

}  // namespace hwt
