#include "analysis/step_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "backend/attention_paths.h"
#include "core/error.h"

namespace hwt {
namespace {

struct AttentionRate {
  int64_t head_dim;
  double forward, backward;  // fraction of the GPU's tensor-core peak
};

// bench_kernels on an H200 (2026-12-01, docs/benchmarks.md "Attention at every head size"):
// causal, B8 T1024, 16 heads, TFLOP/s over the computed half of the products, divided by the
// catalog's peak (989.5 bf16, 494.5 TF32).
// Head sizes 80 to 128 re-measured (2026-12-02) on the warpgroup kernels' 128-wide instance.
constexpr AttentionRate k16Bit[] = {{32, 0.1328, 0.0745},  {64, 0.2338, 0.1570},
                                    {80, 0.1746, 0.1139},  {96, 0.2041, 0.1334},
                                    {128, 0.2646, 0.1718}, {256, 0.1840, 0.0830}};
constexpr AttentionRate kTf32[] = {{64, 0.1397, 0.0722}, {128, 0.1035, 0.0402}};

// "layers.11.mlp.fc1" -> "layers.*.mlp.fc1".
std::string layer_pattern(const std::string& scope) {
  std::string out;
  for (size_t i = 0; i < scope.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(scope[i])) && i > 0 && scope[i - 1] == '.') {
      out += '*';
      while (i + 1 < scope.size() && std::isdigit(static_cast<unsigned char>(scope[i + 1]))) ++i;
    } else {
      out += scope[i];
    }
  }
  return out;
}

}  // namespace

double attention_peak_fraction(GpuArch arch, Precision p, int64_t head_dim, bool backward) {
  if (arch == GpuArch::Volta || arch == GpuArch::Turing) return 0.0;  // the kernels need sm_80
  // AMD and TPU: a flash kernel of their own stacks (Composable Kernel, Pallas) in 16-bit
  // precisions, assumed to reach the share of peak hwt's reach on an H200.
  if (!is_nvidia(arch) && p != Precision::Bf16 && p != Precision::Fp16) return 0.0;
  const DType dt = activation_dtype(p);
  if (!attention_slow_path(dt, p == Precision::Tf32, head_dim).empty()) return 0.0;
  const int64_t d = attention_kernel_head_dim(dt, head_dim);
  auto pick = [&](const auto& table) {
    for (const AttentionRate& r : table)  // the kernel instance that runs this size
      if (d <= r.head_dim) return backward ? r.backward : r.forward;
    return 0.0;
  };
  return p == Precision::Tf32 ? pick(kTf32) : pick(k16Bit);
}

double StepEstimate::power_fraction() const {
  const double tensor_share = seconds() > 0 ? (gemm_s + attention_s) / seconds() : 0;
  return std::min(1.0, kPowerAtNoTensorWork + kPowerPerTensorShare * tensor_share);
}

StepEstimate estimate_step(const Workload& w, const GemmModel& gemm, const GemmModel* fp8) {
  StepEstimate e;
  const GpuSpec& gpu = gemm.gpu();
  const Precision p = gemm.precision();
  const double bandwidth = gpu.memory_bandwidth_gbs * 1e9 * gemm.constants().memory_fraction;
  const double peak = gpu.peak_tflops(p) * 1e12;
  std::map<std::string, double> groups;
  bool generic_attention = false;
  for (const OpRecord& op : w.ops) {
    double s = 0;
    if (op.kind == OpKind::Gemm) {
      for (const GemmCall& g : op.gemms) {
        if (is_fp8(g.dtype) && !fp8) fail("estimate_step: an fp8 GEMM but no fp8 model");
        s += (is_fp8(g.dtype) ? *fp8 : gemm).predict(g.shape).seconds;
      }
      e.gemm_s += s;
    } else if (op.kind == OpKind::Attention) {
      int64_t head_dim = 0;  // the contraction of the score-shaped product, Q·Kᵀ or dO·Vᵀ
      for (const GemmCall& g : op.gemms)
        if (g.role == GemmRole::AttentionScores || g.role == GemmRole::AttentionProbGrad)
          head_dim = g.shape.k;
      const double f = attention_peak_fraction(gpu.arch, p, head_dim, op.phase == Phase::Backward);
      if (f == 0.0) {
        generic_attention = true;
        s = (op.bytes_read + op.bytes_written) / bandwidth;  // a floor, not an estimate
      } else {
        s = op.gemm_flops() * op.computed_share / (peak * f);
      }
      e.attention_s += s;
    } else {
      s = (op.bytes_read + op.bytes_written) / bandwidth;
      (op.phase == Phase::Optimizer ? e.optimizer_s : e.memory_s) += s;
    }
    e.flops += op.flops;
    e.op_seconds.push_back(s);
    groups[fmt::format("{} {}", op_name(op.op), layer_pattern(op.scope))] += s;
  }
  const double modelled = e.gemm_s + e.attention_s + e.memory_s + e.optimizer_s;
  e.overhead_s =
      (kSustainedRateFactor - 1) * modelled + kOpGapSeconds * static_cast<double>(w.ops.size());
  for (const auto& [name, seconds] : groups) e.slowest.push_back({name, seconds});
  std::sort(
      e.slowest.begin(), e.slowest.end(),
      [](const OpGroupEstimate& a, const OpGroupEstimate& b) { return a.seconds > b.seconds; });
  if (e.slowest.size() > 3) e.slowest.resize(3);
  if (generic_attention)
    e.notes.push_back(
        "attention runs hwt's generic kernels here (head size, precision or a GPU before "
        "sm_80); priced at its memory traffic only, so the step time is a lower bound");
  if (!is_nvidia(gpu.arch))
    e.notes.push_back(fmt::format(
        "{}; attention is priced as a flash kernel reaching the share of peak hwt's reach on an "
        "H200, other ops at memory bandwidth{}, and the per-op gaps and power fitted on an H200 "
        "are kept",
        not_measured_note(gpu.arch),
        gpu.arch == GpuArch::Tpu ? " (XLA fuses many of them into their neighbours: overstated)"
                                 : ""));
  if (gpu.tdp_w <= 0)
    e.notes.push_back(fmt::format(
        "no power figure is published for {}: power and energy are not estimated", gpu.name));
  return e;
}

}  // namespace hwt
