// The fp8 form of the linear ops (backend/fp8_linear.h) on the CPU backend, against the same
// layer computed here from the operands quantised with the same scales (core/fp8.h's
// quantize_fp8): forward, input and weight gradients, the figures each tensor's casts keep, the
// per-product choice, and what the trace records.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/fp8_linear.h"
#include "backend/trace/trace_backend.h"
#include "core/fp8.h"
#include "cuda_test_util.h"
#include "fp8_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

constexpr int64_t kM = 32, kN = 64, kK = 48;

// The backward of a bias-free linear without activation: dy given, dx written, dw from zero.
LinearBwd plain_backward(test::Fp8LinearState& l, const LinearFwd& f,
                         const std::vector<float>& dy) {
  return {f.x,
          f.w,
          l.p.f32({kM, kN}, dy),
          {},
          Activation::None,
          l.p.zeros({kM, kK}),
          l.p.zeros({kN, kK}),
          {},
          false,
          l.fp8};
}

// |w| about 0.1 and dy about 0.01 scaled well inside E4M3's and E5M2's ranges; x (|x| up to about
// 4) scaled by 256 saturates past 1.75, so that its counts are worth checking.
TEST(Fp8Linear, ForwardAndBackwardAreTheQuantisedLayer) {
  CpuBackend be(2);
  const float sx = 256.0f, sw = 2048.0f, sdy = 4096.0f;
  test::Fp8LinearState l(be, kM, kN, kK, sx, sw, sdy);
  const std::vector<float> x = test::randn(kM * kK, 1), w = test::randn(kN * kK, 2, 0.1f),
                           b = test::randn(kN, 3), dy = test::randn(kM * kN, 4, 0.01f),
                           dw0 = test::randn(kN * kK, 5);
  LinearFwd f{l.p.f32({kM, kK}, x),
              l.p.f32({kN, kK}, w),
              l.p.f32({kN}, b),
              l.p.zeros({kM, kN}),
              Activation::GeluTanh,
              l.p.zeros({kM, kN}),
              l.fp8};
  be.linear_forward(f);
  LinearBwd bw{f.x,
               f.w,
               l.p.f32({kM, kN}, dy),
               f.pre_act,
               Activation::GeluTanh,
               l.p.zeros({kM, kK}),
               l.p.f32({kN, kK}, dw0),
               l.p.zeros({kN}),
               false,
               l.fp8};
  be.linear_backward(bw);

  const std::vector<float> xq = test::through_fp8(x, sx, Fp8Format::E4M3),
                           wq = test::through_fp8(w, sw, Fp8Format::E4M3);
  const std::vector<float> y = l.p.read(f.y), z = l.p.read(f.pre_act);
  std::vector<float> g(dy.size()), db(kN, 0.0f);  // dy through the activation's derivative
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      double want = b[size_t(j)], size = std::fabs(b[size_t(j)]);
      for (int64_t q = 0; q < kK; ++q) {
        want += double(xq[size_t(i * kK + q)]) * wq[size_t(j * kK + q)];
        size += std::fabs(double(xq[size_t(i * kK + q)]) * wq[size_t(j * kK + q)]);
      }
      const size_t ij = size_t(i * kN + j);
      // fp32 sums of 48 terms against double: a few ulps of the magnitudes added.
      EXPECT_NEAR(z[ij], want, 1e-6 * size) << i << "," << j;
      EXPECT_NEAR(y[ij], activate(Activation::GeluTanh, z[ij]), 1e-6 * (1 + std::fabs(z[ij])));
      g[ij] = dy[ij] * activate_grad(Activation::GeluTanh, z[ij]);
      db[size_t(j)] += g[ij];
    }
  // The backward leaves dy through the activation's derivative in bw.dy: the values its casts
  // quantised (its vector math may round the derivative otherwise than activate_grad here).
  const std::vector<float> g_op = l.p.read(bw.dy);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g_op[i], g[i], 1e-5 * std::fabs(dy[i]) + 1e-12) << i;
  const std::vector<float> gq = test::through_fp8(g_op, sdy, Fp8Format::E5M2);
  const std::vector<float> dx = l.p.read(bw.dx), dw = l.p.read(bw.dw), dbg = l.p.read(bw.db);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t q = 0; q < kK; ++q) {
      double want = 0, size = 0;
      for (int64_t j = 0; j < kN; ++j) {
        want += double(gq[size_t(i * kN + j)]) * wq[size_t(j * kK + q)];
        size += std::fabs(double(gq[size_t(i * kN + j)]) * wq[size_t(j * kK + q)]);
      }
      EXPECT_NEAR(dx[size_t(i * kK + q)], want, 1e-6 * size + 1e-12) << i << "," << q;
    }
  for (int64_t j = 0; j < kN; ++j) {
    for (int64_t q = 0; q < kK; ++q) {
      double want = dw0[size_t(j * kK + q)], size = std::fabs(want);
      for (int64_t i = 0; i < kM; ++i) {
        want += double(gq[size_t(i * kN + j)]) * xq[size_t(i * kK + q)];
        size += std::fabs(double(gq[size_t(i * kN + j)]) * xq[size_t(i * kK + q)]);
      }
      EXPECT_NEAR(dw[size_t(j * kK + q)], want, 1e-6 * size) << j << "," << q;
    }
    EXPECT_NEAR(dbg[size_t(j)], db[size_t(j)], 1e-5 * kM * test::max_abs(g));  // from f32 g, not gq
  }
  // Each tensor's figures from one cast of its values: the second layouts keep none.
  EXPECT_EQ(l.p.read(l.x.amax)[0], test::max_abs(x));
  EXPECT_EQ(l.p.read(l.w.amax)[0], test::max_abs(w));
  EXPECT_EQ(l.p.read(l.dy.amax)[0], test::max_abs(g_op));
  const std::vector<int32_t> x_counts = l.p.read_i32(l.x.counts);
  std::vector<uint8_t> codes(x.size());
  const Fp8Counts once = quantize_fp8(x, sx, Fp8Format::E4M3, codes);
  EXPECT_EQ(x_counts, (std::vector<int32_t>{int32_t(once.overflow), int32_t(once.underflow), 0}));
  EXPECT_GT(once.overflow, 0) << "x's scale saturates some of it";
}

// A product left out of fp8 runs as without it; a tensor whose first cast is in the backward
// keeps its figures there.
TEST(Fp8Linear, EachProductChosenApart) {
  CpuBackend be(2);
  test::Fp8LinearState l(be, kM, kN, kK, 64.0f, 2048.0f, 4096.0f);
  l.fp8.forward = l.fp8.input_grad = false;
  const std::vector<float> x = test::randn(kM * kK, 1), w = test::randn(kN * kK, 2, 0.1f),
                           dy = test::randn(kM * kN, 4, 0.01f);
  LinearFwd f{l.p.f32({kM, kK}, x),
              l.p.f32({kN, kK}, w),
              {},
              l.p.zeros({kM, kN}),
              Activation::None,
              {},
              l.fp8};
  be.linear_forward(f);
  LinearFwd plain = f;
  plain.fp8 = {};
  plain.y = l.p.zeros({kM, kN});
  be.linear_forward(plain);
  EXPECT_EQ(l.p.read(f.y), l.p.read(plain.y));
  EXPECT_EQ(l.p.read(l.x.amax)[0], 0.0f) << "no fp8 cast in the forward";
  LinearBwd bw = plain_backward(l, f, dy);
  be.linear_backward(bw);
  EXPECT_EQ(l.p.read(l.x.amax)[0], test::max_abs(x));
  EXPECT_EQ(l.p.read(l.dy.amax)[0], test::max_abs(dy));
  EXPECT_EQ(l.p.read(l.w.amax)[0], 0.0f) << "w is read in bf16 by the input grad";
  LinearBwd plain_bw = bw;
  plain_bw.fp8 = {};
  plain_bw.dx = l.p.zeros({kM, kK});
  be.linear_backward(plain_bw);
  EXPECT_EQ(l.p.read(bw.dx), l.p.read(plain_bw.dx));
  // fp8 products need every dimension a multiple of 16.
  LinearFwd odd = f;
  odd.fp8.forward = true;
  odd.x = l.p.zeros({kM, 40});
  odd.w = l.p.zeros({kN, 40});
  EXPECT_THROW(be.linear_forward(odd), Error);
}

// One fp8 layer's step on `b`, forward then the plain backward, of x, w and dy scaled as below;
// `prepare` may change the layer's fp8 form (and spoil x or dy) first. What it gave: y, dx, dw and
// the amaxes of x, w and dy; on the trace, the casts it recorded.
struct StepOut {
  std::vector<float> y, dx, dw, amax;
  int casts = 0;
};
using Prepare = std::function<void(Backend&, test::Fp8LinearState&, LinearFwd&, LinearBwd&)>;
StepOut fp8_step(Backend& b, const Prepare& prepare) {
  const std::vector<float> x = test::randn(kM * kK, 1), w = test::randn(kN * kK, 2, 0.1f),
                           dy = test::randn(kM * kN, 4, 0.01f);
  test::Fp8LinearState l(b, kM, kN, kK, 64.0f, 2048.0f, 4096.0f);
  LinearFwd f{l.p.f32({kM, kK}, x),
              l.p.f32({kN, kK}, w),
              {},
              l.p.zeros({kM, kN}),
              Activation::None,
              {},
              l.fp8};
  LinearBwd bw = plain_backward(l, f, dy);
  prepare(b, l, f, bw);
  auto* trace = dynamic_cast<TraceBackend*>(&b);
  if (trace) trace->clear();
  b.linear_forward(f);
  b.linear_backward(bw);
  StepOut o;
  if (trace) {
    for (const OpRecord& r : trace->workload().ops) o.casts += r.op == Op::fp8_cast;
    return o;
  }
  o.y = l.p.read(f.y);
  o.dx = l.p.read(bw.dx);
  o.dw = l.p.read(bw.dw);
  o.amax = {l.p.read(l.x.amax)[0], l.p.read(l.w.amax)[0], l.p.read(l.dy.amax)[0]};
  EXPECT_EQ(o.amax[0], test::max_abs(x));  // each kept once, by a cast or the producer
  EXPECT_EQ(o.amax[1], test::max_abs(w));
  EXPECT_EQ(o.amax[2], test::max_abs(dy));
  return o;
}

void expect_same_step(const StepOut& a, const StepOut& b) {
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.dx, b.dx);
  EXPECT_EQ(a.dw, b.dw);
}

// Copies of x and dy that their producer wrote (Fp8Linear::made) are read in place of casts: the
// products give what they give over the layer's own casts, and only w is cast (and traced).
TEST(Fp8Linear, ProducersCopiesReplaceTheirCasts) {
  const Prepare made = [](Backend& b, test::Fp8LinearState& l, LinearFwd& f, LinearBwd& bw) {
    const Fp8Copies c{l.p.make(DType::F8E4M3, {kM, kK}), l.p.make(DType::F8E4M3, {kK, kM}),
                      l.p.make(DType::F8E5M2, {kM, kN}), l.p.make(DType::F8E5M2, {kN, kM})};
    cast_fp8_out(b, f.x, fp8_out(c.x, c.x_t, l.x));
    cast_fp8_out(b, bw.dy, fp8_out(c.dy, c.dy_t, l.dy));
    f.fp8.made = bw.fp8.made = c;
    // What the products read must be the copies: the layer's own x and dy are spoiled.
    b.fill({f.x, NAN});
    b.fill({bw.dy, NAN});
  };
  const Prepare as_is = [](Backend&, test::Fp8LinearState&, LinearFwd&, LinearBwd&) {};
  CpuBackend be(2);
  expect_same_step(fp8_step(be, made), fp8_step(be, as_is));
  TraceBackend trace;
  EXPECT_EQ(fp8_step(trace, as_is).casts, 5);  // x, w, dy (both layouts), wᵀ, xᵀ
  EXPECT_EQ(fp8_step(trace, made).casts, 2);   // w, wᵀ
}

// wᵀ kept from the forward's cast of w (Fp8Linear::w_t) gives the input-grad product the codes
// of the cast it replaces: the same results and figures (w's kept once, by the forward), from
// four casts (x, w with wᵀ, dy with dyᵀ, xᵀ) where there were five.
TEST(Fp8Linear, KeptWeightCopyReplacesTheInputGradCast) {
  const Prepare keep = [](Backend&, test::Fp8LinearState& l, LinearFwd& f, LinearBwd& bw) {
    f.fp8.w_t = bw.fp8.w_t = l.p.make(DType::F8E4M3, {kK, kN});
  };
  const Prepare as_is = [](Backend&, test::Fp8LinearState&, LinearFwd&, LinearBwd&) {};
  CpuBackend be(2);
  expect_same_step(fp8_step(be, keep), fp8_step(be, as_is));
  TraceBackend trace;
  EXPECT_EQ(fp8_step(trace, as_is).casts, 5);
  EXPECT_EQ(fp8_step(trace, keep).casts, 4);
}

// The trace records the casts and the products in fp8, which the step-time model prices.
TEST(Fp8Linear, TraceRecordsTheCastsAndFp8Products) {
  TraceBackend be;
  test::Fp8LinearState l(be, kM, kN, kK, 1.0f, 1.0f, 1.0f);
  LinearFwd f{l.p.make(DType::BF16, {kM, kK}),
              l.p.make(DType::BF16, {kN, kK}),
              {},
              l.p.make(DType::BF16, {kM, kN}),
              Activation::None,
              {},
              l.fp8};
  be.clear();
  be.linear_forward(f);
  LinearBwd bw{f.x,
               f.w,
               l.p.make(DType::BF16, {kM, kN}),
               {},
               Activation::None,
               l.p.make(DType::BF16, {kM, kK}),
               l.p.make(DType::F32, {kN, kK}),
               {},
               false,
               l.fp8};
  be.linear_backward(bw);
  int casts = 0;
  std::vector<DType> gemm_dtypes;
  for (const OpRecord& r : be.workload().ops) {
    if (r.op == Op::fp8_cast) ++casts;
    for (const GemmCall& g : r.gemms) gemm_dtypes.push_back(g.dtype);
  }
  EXPECT_EQ(casts, 5);  // x, w; dy with dyᵀ, wᵀ; xᵀ
  EXPECT_EQ(gemm_dtypes, (std::vector<DType>{DType::F8E4M3, DType::F8E5M2, DType::F8E5M2}));
}

}  // namespace
}  // namespace hwt
