// CpuBackend: runtime pruning of activations and activation gradients, the reference the CUDA
// kernel is tested against (DynaProp runs inside the optimizer steps, cpu_optimizer.cpp).
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"

namespace hwt {

void CpuBackend::prune_small(const PruneSmall& a) {
  expect_f32(a.x, "x");
  expect_i32(a.zeros, "zeros");
  HWT_CHECK(a.zeros.numel() == 2, "prune_small counter {} must be i32 [2]", a.zeros.str());
  const int64_t n = a.x.numel();
  float* x = a.x.as<float>();
  int64_t zeros = 0;
#pragma omp parallel for schedule(static) reduction(+ : zeros)
  for (int64_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) <= a.tau) x[i] = 0.0f;
    zeros += x[i] == 0.0f;
  }
  uint64_t count = 0;
  std::memcpy(&count, a.zeros.data, sizeof count);
  count += static_cast<uint64_t>(zeros);
  std::memcpy(a.zeros.data, &count, sizeof count);
}

}  // namespace hwt
