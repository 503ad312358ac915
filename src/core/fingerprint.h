// A stable 64-bit fingerprint of a text (FNV-1a): the same on every build and machine, unlike
// std::hash, so it can be stored in files and compared between processes.
#pragma once

#include <cstdint>
#include <string_view>

namespace hwt {

inline constexpr uint64_t kFingerprintStart = 1469598103934665603ull;

// fingerprint(b, fingerprint(a)) == fingerprint(a + b): a long input can be fingerprinted in
// parts without joining them.
inline uint64_t fingerprint(std::string_view text, uint64_t h = kFingerprintStart) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace hwt
