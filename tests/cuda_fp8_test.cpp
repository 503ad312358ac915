// The CUDA backend's fp8 ops against the CPU reference: the cast (every code, the amax and the
// counts equal, from f32, bf16 and f16 inputs, as it is, transposed and both at once, at odd
// sizes and over several blocks) and the fp8 product through cuBLASLt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/fp8.h"
#include "cuda_test_util.h"
#include "fp8_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

struct Figures {
  std::vector<uint8_t> codes, codes_t;  // as it is and transposed, where written
  float amax = 0.0f;
  std::vector<int32_t> counts;
};

// The cast of host floats x [rows, cols] (f32) on `be`, with x held in dtype `xt` there.
Figures cast_on(Backend& be, DType xt, const std::vector<float>& x, int64_t rows, int64_t cols,
                DType out_dt, float scale, test::Fp8Layouts layouts) {
  test::DevPool p(be, xt);
  const Fp8Out to{test::writes_as_is(layouts) ? p.make(out_dt, Shape{rows, cols}) : Tensor{},
                  test::writes_transposed(layouts) ? p.make(out_dt, Shape{cols, rows}) : Tensor{},
                  p.f32({1}, {scale}), p.f32({1}, {0.0f}), p.i32({3}, {0, 0, 0})};
  be.fp8_cast({p.act({rows, cols}, x), to});
  Figures f;
  for (auto [t, codes] : {std::pair{&to.out, &f.codes}, {&to.out_t, &f.codes_t}}) {
    if (!t->defined()) continue;
    codes->resize(static_cast<size_t>(rows * cols));
    be.download(codes->data(), *t);
  }
  f.amax = p.read(to.amax)[0];
  f.counts = p.read_i32(to.counts);
  return f;
}

// An op's fp8 copies (Fp8Out of a [rows, width] output) and figures, read back to the host.
struct CopiesRead {
  std::vector<uint8_t> out, out_t;
  float amax = 0.0f;
  std::vector<int32_t> counts;
};
CopiesRead read_copies(Backend& be, test::DevPool& p, const Fp8Out& f) {
  CopiesRead r;
  r.out.resize(static_cast<size_t>(f.out.numel()));
  r.out_t.resize(r.out.size());
  be.download(r.out.data(), f.out);
  be.download(r.out_t.data(), f.out_t);
  r.amax = p.read(f.amax)[0];
  r.counts = p.read_i32(f.counts);
  return r;
}

// The device's copies against the CPU's where the device's exponentials differ from the CPU's in
// their last bits: the device's two layouts agree code for code; each code that differs from the
// CPU's stands for the CPU's value within `step` of it (one fp8 step, relative) or within `floor`;
// at most 2% differ; amax within 1e-5; the saturated count within the codes that differ, the
// flushed count within those and `more_flushed` (values the device and the CPU round apart below
// fp8's range). The CPU's copies must saturate some values.
void expect_copies_near(const CopiesRead& want, const CopiesRead& got, int64_t rows, int64_t width,
                        Fp8Format f, double step, double floor, int64_t more_flushed) {
  int64_t differ = 0, wrong = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < width; ++j) {
      const size_t at = size_t(i * width + j), at_t = size_t(j * rows + i);
      EXPECT_EQ(got.out_t[at_t], got.out[at]) << "the two layouts disagree at " << i << "," << j;
      if (got.out[at] == want.out[at]) continue;
      ++differ;
      const double g = fp8_to_float(got.out[at], f), w = fp8_to_float(want.out[at], f);
      if (!(std::fabs(g - w) <= step * std::fabs(w) + floor)) ++wrong;
    }
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(differ * 50, rows * width);
  EXPECT_NEAR(got.amax, want.amax, 1e-5 * want.amax);
  EXPECT_GT(want.counts[0], 0) << "the inputs should saturate some values";
  EXPECT_NEAR(got.counts[0], want.counts[0], differ);
  EXPECT_NEAR(got.counts[1], want.counts[1], differ + more_flushed);
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
  // in words (100 x 128), and read an element at a time but written so (128 x 70); thousands of
  // tiles, whole (4160 x 2112) and whole and cut (4100 x 2100).
  for (const Size s : {Size{1, 15}, Size{67, 131}, Size{128, 192}, Size{3, 1000}, Size{501, 70},
                       Size{100, 128}, Size{128, 70}, Size{4160, 2112}, Size{4100, 2100}})
    for (const DType out_dt : {DType::F8E4M3, DType::F8E5M2})
      for (const test::Fp8Layouts layouts : test::kAllFp8Layouts) {
        SCOPED_TRACE(testing::Message() << s.rows << "x" << s.cols << " " << dtype_name(out_dt)
                                        << " " << test::layouts_label(layouts));
        std::vector<float> x =
            test::DevPool(gpu, GetParam()).rounded(test::wide_values(s.rows * s.cols, s.rows + 3));
        const float scale = out_dt == DType::F8E4M3 ? 4.0f : 1.0f;
        const Figures want = cast_on(cpu, DType::F32, x, s.rows, s.cols, out_dt, scale, layouts);
        const Figures got = cast_on(gpu, GetParam(), x, s.rows, s.cols, out_dt, scale, layouts);
        saturated += want.counts[0];
        flushed += want.counts[1];
        const Fp8Format f = fp8_format(out_dt);
        int64_t wrong = 0;
        for (auto [w, g] : {std::pair{&want.codes, &got.codes}, {&want.codes_t, &got.codes_t}})
          for (size_t i = 0; i < w->size(); ++i) {
            const bool nan = fp8_is_nan((*w)[i], f);
            if (nan ? !fp8_is_nan((*g)[i], f) : (*g)[i] != (*w)[i]) ++wrong;
          }
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(got.amax, want.amax);
        EXPECT_EQ(got.counts, want.counts);
      }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(flushed, 0);
}

// A gated unit writing its output's fp8 copies (GluFwd / GluBwd with Fp8Out) against the CPU's
// plain op then cast. The values are the same fp32 expressions of the same inputs, but the
// device's exp and tanh differ from the CPU's in their last bits. Where the value is large that
// moves it across an fp8 rounding boundary only where it lies within those bits of one (the code
// then differs by one step); where GeGLU's 1 + tanh cancels (gates below about -4) it also moves
// values of order 1e-6 by their own size, which is about 1e-8 of the tensor's largest. So each
// code must stand for the CPU's value within one fp8 step of it (2^-3 relative in E4M3, 2^-2 in
// E5M2) or within 1e-6 of the largest value, codes may differ in at most 2% of the elements, and
// the counts by at most that many (the flushed count also by the values the CPU gives as 0). Tiles
// whole and cut (rows and widths not multiples of 64 or of a vector), thousands of them
// (4100 x 1100), with the output itself
// written beside the copies or not: where it is, it must equal the plain op's on the device bit for
// bit (the same kernel arithmetic).
TEST_P(CudaFp8, GatedUnitCopiesMatchTheCpu) {
  Backend& gpu = test::gpu_ref();
  struct Size {
    int64_t rows, n;
  };
  for (const Size sz :
       {Size{67, 37}, Size{128, 192}, Size{80, 72}, Size{3, 1000}, Size{4100, 1100}})
    for (const Activation kind : {Activation::SwiGlu, Activation::GeGlu})
      for (const bool backward : {false, true})
        for (const bool keep_output : {false, true}) {
          SCOPED_TRACE(testing::Message() << sz.rows << "x" << sz.n << (backward ? " backward" : "")
                                          << (kind == Activation::GeGlu ? " geglu" : " swiglu")
                                          << (keep_output ? ", output kept" : ""));
          const int64_t rows = sz.rows, n = sz.n, width = backward ? 2 * n : n;
          const DType out_dt = backward ? DType::F8E5M2 : DType::F8E4M3;
          const float scale = backward ? 1048576.0f : 32.0f;  // the largest values saturate
          test::DevPool round(gpu, GetParam());
          std::vector<float> pre = test::randn(rows * 2 * n, sz.rows + 1, 4.0f);
          std::vector<float> dy = test::randn(rows * n, sz.rows + 2, 0.01f);
          pre = round.rounded(pre);
          dy = round.rounded(dy);
          struct Got {
            CopiesRead copies;
            std::vector<float> y, plain;
          };
          auto run = [&](Backend& be, DType dt) {
            test::DevPool p(be, dt);
            const Tensor pre_t = p.act({rows, 2 * n}, pre), dy_t = p.act({rows, n}, dy);
            Fp8Out f{p.make(out_dt, {rows, width}), p.make(out_dt, {width, rows}),
                     p.f32({1}, {scale}), p.f32({1}, {0.0f}), p.i32({3}, {0, 0, 0})};
            const Tensor y = keep_output ? p.poisoned(dt, {rows, width}) : Tensor{};
            const Tensor plain = p.poisoned(dt, {rows, width});
            if (backward) {
              be.glu_backward({pre_t, dy_t, y, kind, f});
              be.glu_backward({pre_t, dy_t, plain, kind});
            } else {
              be.glu_forward({pre_t, y, kind, f});
              be.glu_forward({pre_t, plain, kind});
            }
            Got g{read_copies(be, p, f), {}, p.read(plain)};
            if (keep_output) g.y = p.read(y);
            return g;
          };
          const Got want = run(cpu, DType::F32), got = run(gpu, GetParam());
          // A value the CPU gives as exactly 0 (GeGLU's cancelling tail) may be a tiny one on the
          // device, flushed to the same code 0 but counted as flushed there.
          const auto zeros = std::count(want.plain.begin(), want.plain.end(), 0.0f);
          expect_copies_near(want.copies, got.copies, rows, width, fp8_format(out_dt),
                             backward ? 0.25 : 0.125, 1e-6 * want.copies.amax * scale, zeros);
          if (keep_output) {
            EXPECT_EQ(got.y, got.plain);
          }
        }
}

// The cross-entropy gradient written as its fp8 copies (CrossEntropy with Fp8Out: the LM head's
// dy) against the CPU's plain gradient then cast. As for the gated unit, the device's exponential
// differs from the CPU's in its last bits, so each code must stand for the CPU's value within one
// E5M2 step (2^-2 relative) or 1e-6 of the largest, in at most 2% of the elements; the device
// also flushes exponentials below 2^-126 to exactly 0, which the CPU keeps and then counts as
// flushed by the cast, so the flushed count may fall short by those. Rows ignored (-1) and padded
// columns (classes < cols) give 0; tiles whole and cut, thousands of them.
// The losses are the plain kernel's bit for bit, the row log-sum-exps the CPU's within 1e-5.
TEST_P(CudaFp8, CrossEntropyCopiesMatchTheCpu) {
  Backend& gpu = test::gpu_ref();
  struct Size {
    int64_t rows, cols, classes;
  };
  for (const Size sz : {Size{67, 131, 129}, Size{128, 192, 192}, Size{4100, 1100, 1090}}) {
    SCOPED_TRACE(testing::Message() << sz.rows << "x" << sz.cols << " classes " << sz.classes);
    const int64_t rows = sz.rows, cols = sz.cols;
    const float scale = 1048576.0f;  // gradients near -0.5 (confident rows) saturate E5M2
    test::DevPool round(gpu, GetParam());
    const std::vector<float> logits = round.rounded(test::randn(rows * cols, rows + 5, 6.0f));
    std::vector<int32_t> targets(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r)
      targets[size_t(r)] = r % 7 == 3 ? -1 : static_cast<int32_t>((r * 31) % sz.classes);
    struct Got {
      CopiesRead copies;
      std::vector<float> losses, plain_losses, lse, plain;
    };
    auto run = [&](Backend& be, DType dt) {
      test::DevPool p(be, dt);
      const Tensor x = p.act({rows, cols}, logits), t = p.i32({rows}, targets);
      Fp8Out f{p.make(DType::F8E5M2, {rows, cols}), p.make(DType::F8E5M2, {cols, rows}),
               p.f32({1}, {scale}), p.f32({1}, {0.0f}), p.i32({3}, {0, 0, 0})};
      const Tensor losses = p.poisoned(DType::F32, {rows}), lse = p.poisoned(DType::F32, {rows});
      be.cross_entropy({x, t, losses, {}, 0.5f, {}, sz.classes, lse, f});
      const Tensor plain = p.poisoned(dt, {rows, cols});
      const Tensor plain_losses = p.poisoned(DType::F32, {rows});
      be.cross_entropy({x, t, plain_losses, plain, 0.5f, {}, sz.classes});
      return Got{read_copies(be, p, f), p.read(losses), p.read(plain_losses), p.read(lse),
                 p.read(plain)};
    };
    const Got want = run(cpu, DType::F32), got = run(gpu, GetParam());
    EXPECT_GT(want.copies.counts[1], 0) << "the inputs should flush some values";
    const auto tiny = std::count_if(want.plain.begin(), want.plain.end(),
                                    [](float v) { return v != 0.0f && std::fabs(v) < 1.2e-38f; });
    expect_copies_near(want.copies, got.copies, rows, cols, Fp8Format::E5M2, 0.25,
                       1e-6 * want.copies.amax * scale, tiny);
    EXPECT_EQ(got.losses, got.plain_losses);
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_NEAR(got.lse[size_t(r)], want.lse[size_t(r)],
                  1e-5 * (1 + std::fabs(want.lse[size_t(r)])))
          << "row " << r;
  }
}

// c = a · bᵀ of fp8 operands into c of the test's dtype (f32, bf16, f16), against the CPU's fp32
// product of the same values. Every product of two fp8 values is exact in fp32; the sums are
// not: Hopper's fp8 tensor cores keep about 14 bits of their partial sums (DeepSeek-V3
// technical report, section 3.3.2) before cuBLASLt adds them into fp32, so the error is bounded
// by about 2^-13 of the magnitudes added per addition; 2^-10 of Σ|a·b| leaves room for that and
// catches any wrong scale or operand (errors of order Σ|a·b|). The output's own rounding (half
// an ulp: 2^-8 relative in bf16, 2^-11 in f16) comes on top. Plain, with a bias and tanh-GELU
// (cuBLASLt's epilogue or the bias_act kernel after it), and accumulating into c.
TEST_P(CudaFp8, MatmulMatchesTheCpu) {
  Backend& gpu = test::gpu_ref();
  const int64_t m = 96, n = 80, k = 160;  // multiples of 16, as fp8 GEMMs need
  enum class Epilogue { Plain, BiasGelu, Accumulate };
  for (const Epilogue e : {Epilogue::Plain, Epilogue::BiasGelu, Epilogue::Accumulate})
    for (const DType b_dt : {DType::F8E4M3, DType::F8E5M2}) {
      SCOPED_TRACE(testing::Message() << dtype_name(b_dt) << " epilogue " << static_cast<int>(e));
      const std::vector<uint8_t> a = test::finite_fp8_codes(m * k, Fp8Format::E4M3, 11);
      const std::vector<uint8_t> b = test::finite_fp8_codes(n * k, fp8_format(b_dt), 12);
      const float sa = 1.0f / 64, sb = b_dt == DType::F8E4M3 ? 1.0f / 32 : 1.0f / 8192;
      // Quarters and small integers: exact in every output dtype.
      std::vector<float> bias(static_cast<size_t>(n)), c0(static_cast<size_t>(m * n));
      for (size_t j = 0; j < bias.size(); ++j) bias[j] = static_cast<float>(j % 9) * 0.25f - 1.0f;
      for (size_t i = 0; i < c0.size(); ++i) c0[i] = static_cast<float>(i % 7) - 3.0f;
      struct Out {
        std::vector<float> c, pre_act;
      };
      auto run = [&](Backend& be, DType c_dt) {
        test::DevPool p(be, c_dt);
        Matmul mm{p.make(DType::F8E4M3, {m, k}), p.make(b_dt, {n, k}),
                  e == Epilogue::Accumulate ? p.act({m, n}, c0) : p.poisoned(c_dt, {m, n})};
        be.upload(mm.a, a.data());
        be.upload(mm.b, b.data());
        mm.trans_b = true;
        mm.a_scale_inv = p.f32({1}, {sa});
        mm.b_scale_inv = p.f32({1}, {sb});
        if (e == Epilogue::BiasGelu) {
          mm.bias = p.act({n}, bias);
          mm.act = Activation::GeluTanh;
          mm.pre_act = p.poisoned(c_dt, {m, n});
        }
        if (e == Epilogue::Accumulate) mm.beta = 1.0f;
        be.matmul(mm);
        return Out{p.read(mm.c), mm.pre_act.defined() ? p.read(mm.pre_act) : std::vector<float>{}};
      };
      const Out want = run(cpu, DType::F32), got = run(gpu, GetParam());
      const double out_round = GetParam() == DType::F32    ? 0.0
                               : GetParam() == DType::BF16 ? std::ldexp(1.0, -8)
                                                           : std::ldexp(1.0, -11);
      int64_t wrong = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const size_t ij = size_t(i * n + j);
          double size = 0;
          for (int64_t q = 0; q < k; ++q)
            size += std::fabs(double(fp8_to_float(a[size_t(i * k + q)], Fp8Format::E4M3)) * sa *
                              fp8_to_float(b[size_t(j * k + q)], fp8_format(b_dt)) * sb);
          const double w = want.c[ij], g = got.c[ij];
          double tol = std::ldexp(size, -10) + out_round * std::fabs(w);
          // Accumulating, the product may be rounded to c's dtype before c is added: an ulp of
          // the product, which exceeds one of the sum where c cancels it.
          if (e == Epilogue::Accumulate) tol += out_round * std::fabs(w - c0[ij]);
          if (e == Epilogue::BiasGelu) {
            // The activation (slope at most 1.13) may read the product as pre_act keeps it,
            // rounded to the output dtype: twice the product's error and rounding covers it.
            const double z = want.pre_act[ij];
            const double z_tol = std::ldexp(size, -10) + out_round * std::fabs(z);
            if (!(std::fabs(got.pre_act[ij] - z) <= z_tol)) ++wrong;
            tol += 2.0 * z_tol;
          }
          if (!(std::fabs(g - w) <= tol)) ++wrong;
        }
      EXPECT_EQ(wrong, 0);
    }
}

// cuBLASLt's fp8 kernels refuse a scale pointer off a 16-byte boundary (an H100 answered
// CUBLAS_STATUS_NOT_SUPPORTED for offsets of 4, 8 and 12 bytes), and the delayed-scaling state
// keeps its scales packed: the product must be the same wherever in a buffer the scales sit.
TEST_P(CudaFp8, MatmulTakesScalesAtAnyOffset) {
  Backend& gpu = test::gpu_ref();
  const int64_t m = 80, n = 384, k = 128;  // the shape an unaligned scale first failed on
  const std::vector<uint8_t> a = test::finite_fp8_codes(m * k, Fp8Format::E4M3, 31);
  const std::vector<uint8_t> b = test::finite_fp8_codes(n * k, Fp8Format::E4M3, 32);
  test::DevPool p(gpu, GetParam());
  const Tensor scales = p.f32({8}, std::vector<float>(8, 1.0f / 64));
  auto product = [&](int64_t a_offset, int64_t b_offset) {
    Matmul mm{p.make(DType::F8E4M3, {m, k}), p.make(DType::F8E4M3, {n, k}),
              p.poisoned(GetParam(), {m, n})};
    gpu.upload(mm.a, a.data());
    gpu.upload(mm.b, b.data());
    mm.trans_b = true;
    auto at = [&](int64_t offset) {
      Tensor t = scales;
      t.data = static_cast<float*>(t.data) + offset;
      t.shape = Shape{1};
      return t;
    };
    mm.a_scale_inv = at(a_offset);
    mm.b_scale_inv = at(b_offset);
    gpu.matmul(mm);
    return p.read(mm.c);
  };
  const std::vector<float> aligned = product(0, 4);
  for (const auto& [ao, bo] : {std::pair{1, 2}, std::pair{3, 5}, std::pair{4, 7}}) {
    SCOPED_TRACE(testing::Message() << "scale offsets " << 4 * ao << " and " << 4 * bo << " bytes");
    EXPECT_EQ(product(ao, bo), aligned);  // the same scales, the same kernel: the same bits
  }
}

// A linear layer in fp8 on the device against the CPU's: inputs held in the test's dtype on
// both sides, so every cast sees the same values and makes the same codes (and the same amax and
// counts); the products then differ only as MatmulMatchesTheCpu allows. No activation here: the
// device applies it to dy in the activation dtype, which moves some codes by one step.
TEST_P(CudaFp8, LinearMatchesTheCpu) {
  Backend& gpu = test::gpu_ref();
  const int64_t m = 64, n = 96, k = 128;
  const float sx = 32.0f, sw = 1024.0f, sdy = 2048.0f;
  const std::vector<float> x = test::DevPool(gpu, GetParam()).rounded(test::randn(m * k, 21)),
                           w = test::DevPool(gpu, GetParam()).rounded(test::randn(n * k, 22, 0.1f)),
                           b = test::DevPool(gpu, GetParam()).rounded(test::randn(n, 23)),
                           dy = test::DevPool(gpu, GetParam())
                                    .rounded(test::randn(m * n, 24, 0.01f));
  struct Out {
    std::vector<float> y, dx, dw, db, amax;
    std::vector<int32_t> counts;
  };
  auto run = [&](Backend& be, DType dt) {
    test::Fp8LinearState l(be, m, n, k, sx, sw, sdy);
    test::DevPool p(be, dt);
    LinearFwd f{p.act({m, k}, x),
                p.act({n, k}, w),
                p.act({n}, b),
                p.poisoned_act({m, n}),
                Activation::None,
                {},
                l.fp8};
    be.linear_forward(f);
    LinearBwd bw{f.x,
                 f.w,
                 p.act({m, n}, dy),
                 {},
                 Activation::None,
                 p.poisoned_act({m, k}),
                 p.zeros({n, k}),
                 p.zeros({n}),
                 false,
                 l.fp8};
    be.linear_backward(bw);
    Out o{p.read(f.y), p.read(bw.dx), p.read(bw.dw), p.read(bw.db), {}, {}};
    for (const Fp8Scaled* s : {&l.x, &l.w, &l.dy}) {
      o.amax.push_back(l.p.read(s->amax)[0]);
      for (const int32_t c : l.p.read_i32(s->counts)) o.counts.push_back(c);
    }
    return o;
  };
  const Out want = run(cpu, DType::F32), got = run(gpu, GetParam());
  EXPECT_EQ(got.amax, want.amax);
  EXPECT_EQ(got.counts, want.counts);
  const double out_round = GetParam() == DType::F32    ? 0.0
                           : GetParam() == DType::BF16 ? std::ldexp(1.0, -8)
                                                       : std::ldexp(1.0, -11);
  const std::vector<float> xq = test::through_fp8(x, sx, Fp8Format::E4M3),
                           wq = test::through_fp8(w, sw, Fp8Format::E4M3),
                           dyq = test::through_fp8(dy, sdy, Fp8Format::E5M2);
  // Σ|a·b| of each output: the scale of a product's error (MatmulMatchesTheCpu's reasoning).
  auto sizes = [](const std::vector<float>& a, const std::vector<float>& bm, int64_t rows,
                  int64_t cols, int64_t inner, bool a_t, bool b_t) {
    std::vector<double> s(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t q = 0; q < inner; ++q)
          s[size_t(i * cols + j)] +=
              std::fabs(double(a[size_t(a_t ? q * rows + i : i * inner + q)]) *
                        bm[size_t(b_t ? j * inner + q : q * cols + j)]);
    return s;
  };
  auto count_wrong = [&](const std::vector<float>& g, const std::vector<float>& wv,
                         const std::vector<double>& size, double round) {
    int64_t wrong = 0;
    for (size_t i = 0; i < g.size(); ++i)
      if (!(std::fabs(g[i] - wv[i]) <= std::ldexp(size[i], -10) + round * std::fabs(wv[i])))
        ++wrong;
    return wrong;
  };
  std::vector<double> y_size = sizes(xq, wq, m, n, k, false, true);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) y_size[size_t(i * n + j)] += std::fabs(b[size_t(j)]);
  EXPECT_EQ(count_wrong(got.y, want.y, y_size, out_round), 0) << "y";
  EXPECT_EQ(count_wrong(got.dx, want.dx, sizes(dyq, wq, m, k, n, false, false), out_round), 0)
      << "dx";
  EXPECT_EQ(count_wrong(got.dw, want.dw, sizes(dyq, xq, n, k, m, true, false), 0.0), 0) << "dw";
  // db sums dy in fp32 on both sides (no fp8 involved): a few ulps of Σ|dy| per column.
  for (int64_t j = 0; j < n; ++j) {
    double size = 0;
    for (int64_t i = 0; i < m; ++i) size += std::fabs(dy[size_t(i * n + j)]);
    EXPECT_NEAR(got.db[size_t(j)], want.db[size_t(j)], 1e-6 * size) << j;
  }
}

// The scale update against the CPU's over several steps: both follow core/fp8_scale_rule.h with
// IEEE divisions and comparisons only, so the histories, scales and inverses must be equal bit for
// bit. The amaxes include the values the rule treats apart (NaN, infinity, zero, one whose scale
// overflows float); histories of 1 step, of fewer steps than a warp's lanes and of a length that
// leaves a part-filled last chunk; the inverses packed and each on a 16-byte row of its own.
TEST(CudaFp8Scaling, UpdateMatchesTheCpu) {
  HWT_REQUIRE_GPU();
  Backend& gpu = test::gpu_ref();
  CpuBackend cpu(2);
  const int64_t tensors = 37;
  for (const int64_t len : {int64_t{1}, int64_t{5}, int64_t{1030}})
    for (const AmaxAlgorithm algorithm : {AmaxAlgorithm::Max, AmaxAlgorithm::MostRecent})
      for (const Fp8Format format : {Fp8Format::E4M3, Fp8Format::E5M2}) {
        SCOPED_TRACE(testing::Message()
                     << "history " << len << " algorithm " << static_cast<int>(algorithm) << " "
                     << fp8_format_name(format));
        const int margin = format == Fp8Format::E4M3 ? 0 : 2;
        std::mt19937 rng(static_cast<unsigned>(len));
        std::uniform_real_distribution<float> log2_amax(-20.0f, 20.0f);
        auto amaxes = [&] {
          std::vector<float> a(static_cast<size_t>(tensors));
          for (float& v : a) v = std::exp2(log2_amax(rng));
          a[1] = NAN;
          a[2] = INFINITY;
          a[3] = 0.0f;
          a[4] = 1e-38f;
          return a;
        };
        std::vector<float> history(static_cast<size_t>(tensors * len));
        for (float& v : history) v = std::exp2(log2_amax(rng));
        std::vector<float> scale(static_cast<size_t>(tensors));
        for (float& v : scale) v = std::exp2(log2_amax(rng));
        auto update_on = [&](test::DevPool& p) {
          return Fp8ScaleUpdate{
              p.make(DType::F32, {tensors}), p.f32({tensors, len}, history),
              p.f32({tensors}, scale),
              // As the scaling state lays it out (a row each) and packed.
              p.poisoned(DType::F32, len == 5 ? Shape{tensors, 4} : Shape{tensors}), format,
              algorithm, margin};
        };
        test::DevPool cpu_pool(cpu, DType::F32), gpu_pool(gpu, DType::F32);
        const Fp8ScaleUpdate want = update_on(cpu_pool), got = update_on(gpu_pool);
        for (int step = 0; step < 3; ++step) {
          const std::vector<float> a = amaxes();
          cpu.upload(want.amax, a.data());
          gpu.upload(got.amax, a.data());
          cpu.fp8_scale_update(want);
          gpu.fp8_scale_update(got);
          for (const auto member : {&Fp8ScaleUpdate::amax, &Fp8ScaleUpdate::history,
                                    &Fp8ScaleUpdate::scale, &Fp8ScaleUpdate::scale_inv}) {
            const std::vector<float> w = cpu_pool.read(want.*member);
            const std::vector<float> g = gpu_pool.read(got.*member);
            int64_t wrong = 0;
            for (size_t i = 0; i < w.size(); ++i)
              if (std::isnan(w[i]) ? !std::isnan(g[i]) : g[i] != w[i]) ++wrong;
            EXPECT_EQ(wrong, 0) << "step " << step;
          }
        }
      }
}

}  // namespace
}  // namespace hwt
