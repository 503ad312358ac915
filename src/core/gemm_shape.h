// One (batched) matrix product as the hardware runs it: C[batch, m, n] = op(A) · op(B), all
// row-major. A is stored m×k (k×m when trans_a), B is stored k×n (n×k when trans_b), C is m×n.
// A linear layer's forward y = x·Wᵀ (W stored out×in) is trans_b. The trace records these, the
// GEMM model predicts them and the CUDA backend hands them to cuBLASLt.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

namespace hwt {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = true;

  int64_t lead_a() const { return trans_a ? m : k; }
  int64_t lead_b() const { return trans_b ? k : n; }
  int64_t lead_c() const { return n; }
  double flops() const {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
  }
  // Written out (not defaulted <=>): nvcc compiles this header as C++17.
  auto key() const { return std::tie(m, n, k, batch, trans_a, trans_b); }
  bool operator==(const GemmShape& o) const { return key() == o.key(); }
  bool operator<(const GemmShape& o) const { return key() < o.key(); }
};

std::string shape_label(const GemmShape& s);  // "8192x2304x768" or "192x(1024x1024x64)"

}  // namespace hwt
