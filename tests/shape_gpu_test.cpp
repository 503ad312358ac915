// The cuBLASLt GEMM timer on a real GPU: its layouts against a double-precision reference, and
// the K = 4090 slowdown the model predicts. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/gemm_model.h"
#include "test_util.h"
#ifdef HWT_WITH_CUDA
#include "measure/gemm_timer.h"
#endif

namespace hwt {
namespace {

#ifdef HWT_WITH_CUDA
// Row-major reference of C = op(A)·op(B) for one batch entry after another.
std::vector<double> reference(const GemmShape& s, const std::vector<float>& a,
                              const std::vector<float>& b) {
  std::vector<double> c(static_cast<size_t>(s.batch * s.m * s.n));
  for (int64_t q = 0; q < s.batch; ++q)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          const int64_t ai = s.trans_a ? k * s.m + i : i * s.k + k;
          const int64_t bi = s.trans_b ? j * s.k + k : k * s.n + j;
          acc += static_cast<double>(a[static_cast<size_t>(q * s.m * s.k + ai)]) *
                 b[static_cast<size_t>(q * s.k * s.n + bi)];
        }
        c[static_cast<size_t>(q * s.m * s.n + i * s.n + j)] = acc;
      }
  return c;
}
#endif

TEST(GemmTimer, LayoutsMatchAReference) {
#ifndef HWT_WITH_CUDA
  GTEST_SKIP() << "skipped: no GPU";
#else
  if (!cuda_device_present()) GTEST_SKIP() << "skipped: no GPU";
  GemmTimer timer;
  uint64_t seed = 11;
  for (Precision p : {Precision::Fp32, Precision::Bf16, Precision::Fp16})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const GemmShape s{37, 53, 70, 3, ta, tb};
        const auto a = test::randn(s.batch * s.m * s.k, seed++);
        const auto b = test::randn(s.batch * s.k * s.n, seed++);
        const auto c = timer.multiply(s, p, a, b);
        const double tol = p == Precision::Fp32 ? 1e-5 : 1e-2;
        EXPECT_LT(test::rel_err(c, reference(s, a, b)), tol)
            << precision_name(p) << " trans_a " << ta << " trans_b " << tb;
      }
#endif
}

TEST(GemmTimer, MisalignedKIsSlower) {
#ifndef HWT_WITH_CUDA
  GTEST_SKIP() << "skipped: no GPU";
#else
  if (!cuda_device_present()) GTEST_SKIP() << "skipped: no GPU";
  GemmTimer timer;
  const double aligned = GemmShape{8192, 4 * 4096, 4096}.flops() /
                         timer.seconds({8192, 4 * 4096, 4096}, Precision::Bf16);
  const double misaligned = GemmShape{8192, 4 * 4090, 4090}.flops() /
                            timer.seconds({8192, 4 * 4090, 4090}, Precision::Bf16);
  EXPECT_LT(misaligned, 0.8 * aligned);
#endif
}

}  // namespace
}  // namespace hwt
