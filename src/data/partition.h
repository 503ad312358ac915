// Deterministic train/validation/test partition of examples that come as one set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hwt {

struct Partition {
  std::vector<int64_t> train, valid, test;  // indices, each in shuffled order
};

// Shuffles 0..n-1 by `seed`: the first round(n * valid_fraction) indices validate, the next
// round(n * test_fraction) test, the rest train. The parts stay shuffled, so their first N
// indices are a fair sample (data.max_examples).
Partition partition(int64_t n, double valid_fraction, double test_fraction, uint64_t seed);

// Keeps the first `max` entries; max <= 0 keeps all.
template <class T>
void keep_first(std::vector<T>& v, int64_t max) {
  if (max > 0 && std::ssize(v) > max) v.resize(static_cast<size_t>(max));
}

}  // namespace hwt
