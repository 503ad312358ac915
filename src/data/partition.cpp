#include "data/partition.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

#include "data/shuffle.h"

namespace hwt {

Partition partition(int64_t n, double valid_fraction, double test_fraction, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng = seeded_rng(seed, 0);
  shuffle_in_place(order, rng);
  const auto n_valid = std::min(
      order.size(), static_cast<size_t>(std::llround(static_cast<double>(n) * valid_fraction)));
  const auto n_test =
      std::min(order.size() - std::min(order.size(), n_valid),
               static_cast<size_t>(std::llround(static_cast<double>(n) * test_fraction)));
  const auto at = [&](size_t k) { return order.begin() + static_cast<ptrdiff_t>(k); };
  Partition p;
  p.valid.assign(at(0), at(n_valid));
  p.test.assign(at(n_valid), at(n_valid + n_test));
  p.train.assign(at(n_valid + n_test), order.end());
  return p;
}

}  // namespace hwt
