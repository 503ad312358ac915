// The CPU backend's fp8 ops, the reference of the device's: the cast (core/fp8.h's quantize_fp8
// over the tensor, as it is and transposed, its figures added to earlier ones) and the fp8
// product (the operands' values multiplied in fp32).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/fp8.h"
#include "fp8_test_util.h"

namespace hwt {
namespace {

class CpuFp8 : public ::testing::Test {
 protected:
  CpuBackend be{2};
  Tensor make(DType dt, Shape s) {
    bufs_.emplace_back(be, static_cast<size_t>(s.numel()) * dtype_size(dt));
    return bufs_.back().tensor(dt, s);
  }
  template <class T>
  Tensor hold(DType dt, Shape s, const std::vector<T>& v) {
    Tensor t = make(dt, s);
    be.upload(t, v.data());
    return t;
  }

 private:
  std::vector<DeviceBuffer> bufs_;
};

// Each layout written holds every code, and a cast writing both counts its figures once.
TEST_F(CpuFp8, CastIsQuantizeFp8AsItIsAndTransposed) {
  const int64_t rows = 9, cols = 13;
  const std::vector<float> x = test::wide_values(rows * cols, 7);
  for (const DType dt : {DType::F8E4M3, DType::F8E5M2})
    for (const test::Fp8Layouts layouts : test::kAllFp8Layouts) {
      SCOPED_TRACE(testing::Message() << dtype_name(dt) << " " << test::layouts_label(layouts));
      const float scale = dt == DType::F8E4M3 ? 2.0f : 1.0f;
      std::vector<uint8_t> want(x.size());
      const Fp8Counts c = quantize_fp8(x, scale, fp8_format(dt), want);
      ASSERT_GT(c.overflow, 0);  // the values exercise every count
      ASSERT_GT(c.underflow, 0);
      ASSERT_EQ(c.non_finite, 3);
      // Earlier figures: an amax below this cast's, counts to be added to.
      const Tensor amax = hold(DType::F32, Shape{1}, std::vector<float>{0.5f});
      const Tensor counts = hold(DType::I32, Shape{3}, std::vector<int32_t>{1, 2, 3});
      Fp8Out to{test::writes_as_is(layouts) ? make(dt, Shape{rows, cols}) : Tensor{},
                test::writes_transposed(layouts) ? make(dt, Shape{cols, rows}) : Tensor{},
                hold(DType::F32, Shape{1}, std::vector<float>{scale}), amax, counts};
      be.fp8_cast({hold(DType::F32, Shape{rows, cols}, x), to});
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const uint8_t code = want[size_t(i * cols + j)];
          if (to.out.defined()) {
            EXPECT_EQ(to.out.as<uint8_t>()[i * cols + j], code) << i << "," << j;
          }
          if (to.out_t.defined()) {
            EXPECT_EQ(to.out_t.as<uint8_t>()[j * rows + i], code) << i << "," << j << " transposed";
          }
        }
      EXPECT_EQ(*amax.as<float>(), c.amax);
      EXPECT_EQ(counts.as<int32_t>()[0], 1 + c.overflow);
      EXPECT_EQ(counts.as<int32_t>()[1], 2 + c.underflow);
      EXPECT_EQ(counts.as<int32_t>()[2], 3 + c.non_finite);
      // A larger earlier amax stays.
      *amax.as<float>() = 1e30f;
      be.fp8_cast({hold(DType::F32, Shape{rows, cols}, x), to});
      EXPECT_EQ(*amax.as<float>(), 1e30f);
    }
}

// The cross-entropy gradient written as its fp8 copies (CrossEntropy with Fp8Out) gives the codes
// of the plain gradient cast as fp8_cast casts it, in both layouts, with the figures of one cast;
// the losses are the plain op's, and lse each counted row's log-sum-exp (loss + target logit), 0
// where the row is ignored.
TEST_F(CpuFp8, CrossEntropyWritesItsGradientsCasts) {
  const int64_t rows = 6, cols = 11, classes = 9;
  const std::vector<float> logits = test::randn(rows * cols, 5, 8.0f);
  const std::vector<int32_t> targets{3, -1, 0, 8, 5, 1};
  const float scale = 1048576.0f;  // gradients near -0.25 (confident rows) saturate E5M2
  const Tensor x = hold(DType::F32, Shape{rows, cols}, logits);
  const Tensor t = hold(DType::I32, Shape{rows}, targets);
  const Tensor plain = make(DType::F32, Shape{rows, cols}),
               plain_losses = make(DType::F32, Shape{rows});
  be.cross_entropy({x, t, plain_losses, plain, 0.25f, {}, classes});
  const std::vector<float> values(plain.as<float>(), plain.as<float>() + rows * cols);
  std::vector<uint8_t> want(values.size());
  const Fp8Counts c = quantize_fp8(values, scale, Fp8Format::E5M2, want);
  ASSERT_GT(c.overflow, 0);
  ASSERT_GT(c.underflow, 0);
  Fp8Out f{make(DType::F8E5M2, Shape{rows, cols}), make(DType::F8E5M2, Shape{cols, rows}),
           hold(DType::F32, Shape{1}, std::vector<float>{scale}),
           hold(DType::F32, Shape{1}, std::vector<float>{0.0f}),
           hold(DType::I32, Shape{3}, std::vector<int32_t>{0, 0, 0})};
  const Tensor losses = make(DType::F32, Shape{rows}), lse = make(DType::F32, Shape{rows});
  be.cross_entropy({x, t, losses, {}, 0.25f, {}, classes, lse, f});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const uint8_t code = want[size_t(i * cols + j)];
      EXPECT_EQ(f.out.as<uint8_t>()[i * cols + j], code) << i << "," << j;
      EXPECT_EQ(f.out_t.as<uint8_t>()[j * rows + i], code) << i << "," << j << " transposed";
    }
    EXPECT_EQ(losses.as<float>()[i], plain_losses.as<float>()[i]);
    const int32_t tg = targets[size_t(i)];
    const float row_lse = lse.as<float>()[i];
    if (tg < 0) {
      EXPECT_EQ(row_lse, 0.0f);
    } else {  // lse - x_target was rounded once
      EXPECT_NEAR(row_lse - losses.as<float>()[i], logits[size_t(i * cols + tg)],
                  1e-5f * std::fabs(row_lse));
    }
  }
  EXPECT_EQ(*f.amax.as<float>(), c.amax);
  EXPECT_EQ(f.counts.as<int32_t>()[0], c.overflow);
  EXPECT_EQ(f.counts.as<int32_t>()[1], c.underflow);
}

// A gated unit writing its output's fp8 copies (Fp8Out) gives the codes of its output cast as
// fp8_cast casts it, in both layouts, with the figures of one cast (not one per layout), and
// writes the output itself only where asked.
TEST_F(CpuFp8, GatedUnitWritesItsOutputsCasts) {
  const int64_t rows = 5, n = 7;
  std::vector<float> pre = test::randn(rows * 2 * n, 3), dy = test::randn(rows * n, 4);
  for (float& v : pre) v *= 8.0f;
  for (const bool backward : {false, true})
    for (const bool keep_output : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << (backward ? "backward" : "forward") << (keep_output ? ", output kept" : ""));
      const int64_t width = backward ? 2 * n : n;
      const DType dt = backward ? DType::F8E5M2 : DType::F8E4M3;
      const float scale = backward ? 4096.0f : 16.0f;  // both saturate the largest values
      const Tensor pre_t = hold(DType::F32, Shape{rows, 2 * n}, pre);
      const Tensor dy_t = hold(DType::F32, Shape{rows, n}, dy);
      // The plain op first: what the copies are the casts of.
      const Tensor plain = make(DType::F32, Shape{rows, width});
      if (backward)
        be.glu_backward({pre_t, dy_t, plain, Activation::SwiGlu});
      else
        be.glu_forward({pre_t, plain, Activation::SwiGlu});
      const std::vector<float> values(plain.as<float>(), plain.as<float>() + rows * width);
      std::vector<uint8_t> want(values.size());
      const Fp8Counts c = quantize_fp8(values, scale, fp8_format(dt), want);
      ASSERT_GT(c.overflow, 0);

      Fp8Out f{make(dt, Shape{rows, width}), make(dt, Shape{width, rows}),
               hold(DType::F32, Shape{1}, std::vector<float>{scale}),
               hold(DType::F32, Shape{1}, std::vector<float>{0.0f}),
               hold(DType::I32, Shape{3}, std::vector<int32_t>{0, 0, 0})};
      const Tensor out = keep_output ? make(DType::F32, Shape{rows, width}) : Tensor{};
      if (backward)
        be.glu_backward({pre_t, dy_t, out, Activation::SwiGlu, f});
      else
        be.glu_forward({pre_t, out, Activation::SwiGlu, f});
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < width; ++j) {
          const uint8_t code = want[size_t(i * width + j)];
          EXPECT_EQ(f.out.as<uint8_t>()[i * width + j], code) << i << "," << j;
          EXPECT_EQ(f.out_t.as<uint8_t>()[j * rows + i], code) << i << "," << j;
          if (keep_output) {
            EXPECT_EQ(out.as<float>()[i * width + j], values[size_t(i * width + j)]);
          }
        }
      EXPECT_EQ(*f.amax.as<float>(), c.amax);
      EXPECT_EQ(f.counts.as<int32_t>()[0], c.overflow);
      EXPECT_EQ(f.counts.as<int32_t>()[1], c.underflow);
    }
}

// Plain, with a bias and an activation, and accumulating into c: the epilogue is the same as for
// any other product.
TEST_F(CpuFp8, MatmulIsTheProductOfTheValues) {
  const int64_t m = 3, n = 5, k = 32;
  const std::vector<uint8_t> a = test::finite_fp8_codes(m * k, Fp8Format::E4M3, 1),
                             b = test::finite_fp8_codes(n * k, Fp8Format::E5M2, 2);
  const float sa = 0.25f, sb = 1.0f / 4096;
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f, 0.0f, -3.0f};
  const std::vector<float> c0 = {1, -2, 3, -4, 5, 6, -7, 8, 9, -10, 11, 12, -13, 14, 15};
  enum class Epilogue { Plain, BiasGelu, Accumulate };
  Matmul mm;
  for (const Epilogue e : {Epilogue::Plain, Epilogue::BiasGelu, Epilogue::Accumulate}) {
    SCOPED_TRACE(static_cast<int>(e));
    mm = Matmul{hold(DType::F8E4M3, Shape{m, k}, a), hold(DType::F8E5M2, Shape{n, k}, b),
                hold(DType::F32, Shape{m, n}, c0)};
    mm.trans_b = true;
    mm.a_scale_inv = hold(DType::F32, Shape{1}, std::vector<float>{sa});
    mm.b_scale_inv = hold(DType::F32, Shape{1}, std::vector<float>{sb});
    if (e == Epilogue::BiasGelu) {
      mm.bias = hold(DType::F32, Shape{n}, bias);
      mm.act = Activation::GeluTanh;
      mm.pre_act = make(DType::F32, Shape{m, n});
    }
    if (e == Epilogue::Accumulate) mm.beta = 1.0f;
    be.matmul(mm);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, size = 0;
        for (int64_t q = 0; q < k; ++q) {
          const double t = double(fp8_to_float(a[size_t(i * k + q)], Fp8Format::E4M3)) * sa *
                           double(fp8_to_float(b[size_t(j * k + q)], Fp8Format::E5M2)) * sb;
          want += t;
          size += std::fabs(t);
        }
        const size_t ij = size_t(i * n + j);
        if (e == Epilogue::BiasGelu) {
          want = activate(Activation::GeluTanh, float(want + bias[size_t(j)]));
          size += std::fabs(bias[size_t(j)]);
        }
        if (e == Epilogue::Accumulate) {
          want += c0[ij];
          size += std::fabs(c0[ij]);
        }
        // fp32 accumulation of 32 terms against double: a few ulps of the terms' magnitude; the
        // activation's slope (at most 1.13) and its own rounding can double that.
        const double tol = (e == Epilogue::BiasGelu ? 2e-6 : 1e-6) * size + 1e-30;
        EXPECT_NEAR(mm.c.as<float>()[ij], want, tol) << i << "," << j;
      }
  }
  // Hopper's fp8 GEMMs read both operands K-major: a · bᵀ only, and not both E5M2.
  Matmul plain = mm;
  plain.trans_b = false;
  plain.b = hold(DType::F8E5M2, Shape{k, n}, b);
  EXPECT_THROW(be.matmul(plain), Error);
  Matmul both_e5m2 = mm;
  both_e5m2.a = hold(DType::F8E5M2, Shape{m, k}, a);
  EXPECT_THROW(be.matmul(both_e5m2), Error);
}

}  // namespace
}  // namespace hwt
