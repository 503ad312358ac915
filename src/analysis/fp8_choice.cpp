#include "analysis/fp8_choice.h"

#include <fmt/format.h>

#include "analysis/step_estimate.h"
#include "core/error.h"

namespace hwt {
namespace {

bool is_attention(GemmRole r) {
  switch (r) {
    case GemmRole::AttentionScores:
    case GemmRole::AttentionContext:
    case GemmRole::AttentionValueGrad:
    case GemmRole::AttentionProbGrad:
    case GemmRole::AttentionQueryGrad:
    case GemmRole::AttentionKeyGrad:
      return true;
    case GemmRole::LinearForward:
    case GemmRole::LinearInputGrad:
    case GemmRole::LinearWeightGrad:
    case GemmRole::Matmul:
      return false;
  }
  return false;
}

constexpr int64_t kFp8Multiple = 16;

}  // namespace

GemmPrediction Fp8Choice::chosen() const {
  if (!fp8) return bf16;
  GemmPrediction p = fp8_gemm;
  p.tflops *= p.seconds / (p.seconds + cast_seconds);
  p.seconds += cast_seconds;
  return p;
}

Fp8Choice choose_fp8(const StepGemm& g, const GemmModel& fp8, const GemmModel& bf16) {
  HWT_CHECK(fp8.precision() == Precision::Fp8 && bf16.precision() == Precision::Bf16,
            "choose_fp8 takes an fp8 and a bf16 model, not {} and {}",
            precision_name(fp8.precision()), precision_name(bf16.precision()));
  const GemmShape& s = g.shape;
  Fp8Choice c;
  c.bf16 = bf16.predict(s);
  c.fp8_gemm = fp8.predict(s);
  const double batch = static_cast<double>(s.batch);
  const double operands = batch * static_cast<double>(s.m * s.k + s.k * s.n),
               product = batch * static_cast<double>(s.m * s.n);
  const double bandwidth = fp8.gpu().memory_bandwidth_gbs * 1e9 * fp8.constants().memory_fraction;
  c.cast_seconds = (3 * operands + product) / bandwidth + 2 * kOpGapSeconds;
  const double with_casts = c.fp8_gemm.seconds + c.cast_seconds;
  const auto us = [](double seconds) { return 1e6 * seconds; };
  if (is_attention(g.role)) {
    c.reason = "attention: its products run inside the flash-attention kernels, in bf16";
  } else if (s.m % kFp8Multiple != 0 || s.n % kFp8Multiple != 0 || s.k % kFp8Multiple != 0) {
    c.reason = fmt::format("m, n or k is not a multiple of {}, which fp8 GEMMs need", kFp8Multiple);
  } else if (with_casts >= c.bf16.seconds) {
    c.reason = fmt::format("no gain: {:.1f} us in fp8 with its casts against {:.1f} us in bf16",
                           us(with_casts), us(c.bf16.seconds));
  } else {
    c.fp8 = true;
    c.reason =
        fmt::format("{:.1f} us in fp8 with its casts against {:.1f} us in bf16 ({:.0f}% less)",
                    us(with_casts), us(c.bf16.seconds), 100 * (1 - with_casts / c.bf16.seconds));
  }
  if (!c.fp8) c.cast_seconds = 0;
  return c;
}

}  // namespace hwt
