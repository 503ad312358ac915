// The CUDA backend's fp8 ops against the CPU reference: the cast (every code, the amax and the
// counts equal, from f32, bf16 and f16 inputs, as it is and transposed, at odd sizes and over
// several blocks) and the fp8 product through cuBLASLt.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/fp8.h"
#include "cuda_test_util.h"
#include "fp8_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

struct Figures {
  std::vector<uint8_t> codes;
  float amax = 0.0f;
  std::vector<int32_t> counts;
};

// The cast of host floats x [rows, cols] (f32) on `be`, with x held in dtype `xt` there.
Figures cast_on(Backend& be, DType xt, const std::vector<float>& x, int64_t rows, int64_t cols,
                DType out_dt, float scale, bool transpose) {
  test::DevPool p(be, xt);
  const Tensor out = p.make(out_dt, transpose ? Shape{cols, rows} : Shape{rows, cols});
  const Tensor amax = p.f32({1}, {0.0f});
  const Tensor counts = p.i32({3}, {0, 0, 0});
  be.fp8_cast({p.act({rows, cols}, x), out, p.f32({1}, {scale}), amax, counts, transpose});
  Figures f;
  f.codes.resize(static_cast<size_t>(rows * cols));
  be.download(f.codes.data(), out);
  f.amax = p.read(amax)[0];
  f.counts = p.read_i32(counts);
  return f;
}

class CudaFp8 : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  CpuBackend cpu{2};
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaFp8, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         test::dtype_label);

// The cast is exact arithmetic (one fp32 product, one rounding), so the device must give the
// CPU's codes bit for bit; NaN inputs only need to stay NaN (E5M2 has several NaN codes).
TEST_P(CudaFp8, CastMatchesTheCpu) {
  Backend& gpu = test::gpu_ref();
  struct Size {
    int64_t rows, cols;
  };
  int64_t saturated = 0, flushed = 0;  // over every case: the inputs reach both counts
  // One element short of a vector, odd tiles, several blocks, a row count not a multiple of 4;
  // whole transposed tiles read and written 16 bytes a thread (128 x 192), read so but written
  // in words (100 x 128), and read an element at a time but written so (128 x 70).
  for (const Size s : {Size{1, 15}, Size{67, 131}, Size{128, 192}, Size{3, 1000}, Size{501, 70},
                       Size{100, 128}, Size{128, 70}})
    for (const DType out_dt : {DType::F8E4M3, DType::F8E5M2})
      for (const bool transpose : {false, true}) {
        SCOPED_TRACE(testing::Message() << s.rows << "x" << s.cols << " " << dtype_name(out_dt)
                                        << (transpose ? " transposed" : ""));
        std::vector<float> x =
            test::DevPool(gpu, GetParam()).rounded(test::wide_values(s.rows * s.cols, s.rows + 3));
        const float scale = out_dt == DType::F8E4M3 ? 4.0f : 1.0f;
        const Figures want = cast_on(cpu, DType::F32, x, s.rows, s.cols, out_dt, scale, transpose);
        const Figures got = cast_on(gpu, GetParam(), x, s.rows, s.cols, out_dt, scale, transpose);
        saturated += want.counts[0];
        flushed += want.counts[1];
        const Fp8Format f = fp8_format(out_dt);
        int64_t wrong = 0;
        for (size_t i = 0; i < want.codes.size(); ++i) {
          const bool nan = fp8_is_nan(want.codes[i], f);
          if (nan ? !fp8_is_nan(got.codes[i], f) : got.codes[i] != want.codes[i]) ++wrong;
        }
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(got.amax, want.amax);
        EXPECT_EQ(got.counts, want.counts);
      }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(flushed, 0);
}

// c = a · bᵀ of fp8 operands into c of the test's dtype (f32, bf16, f16), against the CPU's fp32
// product of the same values. Every product of two fp8 values is exact in fp32; the sums are
// not: Hopper's fp8 tensor cores keep about 14 bits of their partial sums (DeepSeek-V3
// technical report, section 3.3.2) before cuBLASLt adds them into fp32, so the error is bounded
// by about 2^-13 of the magnitudes added per addition; 2^-10 of Σ|a·b| leaves room for that and
// catches any wrong scale or operand (errors of order Σ|a·b|). The output's own rounding (half
// an ulp: 2^-8 relative in bf16, 2^-11 in f16) comes on top.
TEST_P(CudaFp8, MatmulMatchesTheCpu) {
  Backend& gpu = test::gpu_ref();
  const int64_t m = 96, n = 80, k = 160;  // multiples of 16, as fp8 GEMMs need
  for (const DType b_dt : {DType::F8E4M3, DType::F8E5M2}) {
    SCOPED_TRACE(dtype_name(b_dt));
    const std::vector<uint8_t> a = test::finite_fp8_codes(m * k, Fp8Format::E4M3, 11);
    const std::vector<uint8_t> b = test::finite_fp8_codes(n * k, fp8_format(b_dt), 12);
    const float sa = 1.0f / 64, sb = b_dt == DType::F8E4M3 ? 1.0f / 32 : 1.0f / 8192;
    auto run = [&](Backend& be, DType c_dt) {
      test::DevPool p(be, c_dt);
      Matmul mm{p.make(DType::F8E4M3, {m, k}), p.make(b_dt, {n, k}), p.poisoned(c_dt, {m, n})};
      be.upload(mm.a, a.data());
      be.upload(mm.b, b.data());
      mm.trans_b = true;
      mm.a_scale_inv = p.f32({1}, {sa});
      mm.b_scale_inv = p.f32({1}, {sb});
      be.matmul(mm);
      return p.read(mm.c);
    };
    const std::vector<float> want = run(cpu, DType::F32), got = run(gpu, GetParam());
    const double out_round = GetParam() == DType::F32    ? 0.0
                             : GetParam() == DType::BF16 ? std::ldexp(1.0, -8)
                                                         : std::ldexp(1.0, -11);
    int64_t wrong = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double size = 0;
        for (int64_t q = 0; q < k; ++q)
          size += std::fabs(double(fp8_to_float(a[size_t(i * k + q)], Fp8Format::E4M3)) * sa *
                            fp8_to_float(b[size_t(j * k + q)], fp8_format(b_dt)) * sb);
        const double w = want[size_t(i * n + j)], g = got[size_t(i * n + j)];
        if (!(std::fabs(g - w) <= std::ldexp(size, -10) + out_round * std::fabs(w))) ++wrong;
      }
    EXPECT_EQ(wrong, 0);
  }
}

}  // namespace
}  // namespace hwt
