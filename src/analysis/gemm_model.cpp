#include "analysis/gemm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "core/error.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

struct Tile {
  int m, n;
};

// How an architecture's GEMM kernels cut the work: the output tiles they choose among (largest
// first: the tile peak_fraction is reached with), the split-K factors, and the K step a tile
// loads per iteration (bytes, or elements where the hardware fixes it). docs/shape.md gives the
// sources.
struct ArchRules {
  std::span<const Tile> tiles;
  std::span<const int> splits;
  int k_step;            // per K iteration: bytes of A and B, or elements if k_step_elements
  bool k_step_elements;  // the TPU's MXU takes 128 K elements whatever the dtype
};

// cuBLAS/CUTLASS tensor-core tiles, Volta to Hopper.
constexpr Tile kNvidiaTiles[] = {{256, 128}, {128, 256}, {128, 128},
                                 {128, 64},  {64, 128},  {64, 64}};
// hipBLASLt's macro tiles on CDNA 2 and 3 (MT0 x MT1 of its kernel names).
constexpr Tile kAmdTiles[] = {{256, 256}, {256, 128}, {128, 256}, {128, 128},
                              {128, 64},  {64, 128},  {64, 64}};
// A TPU MXU is a 128 x 128 systolic array holding a 128 x 128 block of B (K x N); rows of A
// stream through it. XLA pads N and K to 128, so a tile is 128 columns wide and a whole number
// of 128-row blocks tall; taller blocks reload B less often.
constexpr Tile kTpuTiles[] = {{512, 128}, {256, 128}, {128, 128}};
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr int kNoSplit[] = {1};        // XLA's TPU GEMMs do not split K across MXUs
constexpr int kMinKStepsPerSplit = 4;  // split-K below this many K steps per part is not used

ArchRules arch_rules(GpuArch a) {
  switch (a) {
    case GpuArch::Hopper:  // TMA kernels move 128 B rows per K step
      return {kNvidiaTiles, kSplits, 128, false};
    case GpuArch::Volta:
    case GpuArch::Turing:
    case GpuArch::Ampere:
    case GpuArch::Ada:  // Ampere-style kernels (cp.async) load 64 B per K step
      return {kNvidiaTiles, kSplits, 64, false};
    case GpuArch::Cdna2:
    case GpuArch::Cdna3:  // hipBLASLt's depth-U of 64 16-bit elements: 128 B (assumed)
      return {kAmdTiles, kSplits, 128, false};
    case GpuArch::Tpu:
      return {kTpuTiles, kNoSplit, 128, true};
  }
  return {kNvidiaTiles, kSplits, 64, false};
}

// Relative throughput of a TM x TN tile against the arch's largest, `ref`: operand loads per
// multiply-add grow with 1/TM + 1/TN, and that share of the time is not spent on the matrix
// units.
double tile_speed(const Tile& t, const Tile& ref, double c) {
  return (1 + c * (1.0 / ref.m + 1.0 / ref.n)) / (1 + c * (1.0 / t.m + 1.0 / t.n));
}

}  // namespace

int alignment_bytes(int64_t elements, int element_bytes) {
  const int64_t bytes = elements * element_bytes;
  int a = 1;
  while (a < 128 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

int worst_alignment_bytes(const GemmShape& s, int elem) {
  int a = std::min({alignment_bytes(s.lead_a(), elem), alignment_bytes(s.lead_b(), elem),
                    alignment_bytes(s.lead_c(), elem)});
  if (s.batch > 1)  // each matrix of a strided batch starts at a multiple of its size
    a = std::min({a, alignment_bytes(s.m * s.k, elem), alignment_bytes(s.k * s.n, elem),
                  alignment_bytes(s.m * s.n, elem)});
  return a;
}

int align_class(int bytes) {
  int c = 0;
  while ((1 << c) < bytes && c < kAlignClasses) ++c;
  return c;
}

GemmConstants default_constants(GpuArch arch) {
  GemmConstants c;
  switch (arch) {
    case GpuArch::Hopper:
      c.peak_fraction = 0.80;
      c.align = {0.25, 0.30, 0.33, 0.50, 0.85, 0.90, 0.95};
      break;
    case GpuArch::Ampere:
    case GpuArch::Ada:
      c.peak_fraction = 0.88;
      c.align = {0.25, 0.30, 0.35, 0.50, 0.90, 0.93, 0.97};
      break;
    case GpuArch::Volta:
    case GpuArch::Turing:
      c.peak_fraction = 0.85;
      c.align = {0.25, 0.30, 0.35, 0.50, 1.0, 1.0, 1.0};
      break;
    case GpuArch::Cdna2:
    case GpuArch::Cdna3:
      // Assumed, not measured: large hipBLASLt GEMMs reach well under AMD's peak (0.6 is in the
      // range public MI300X benchmarks report); alignment as on Ampere.
      c.peak_fraction = 0.60;
      c.align = {0.25, 0.30, 0.35, 0.50, 0.90, 0.93, 0.97};
      break;
    case GpuArch::Tpu:
      // Assumed, not measured. XLA pads operands to whole MXU tiles, so a misaligned dimension
      // costs its padding (tile quantisation), not a slower kernel: no alignment penalty. One
      // compiled program per step: no host issue per GEMM, no partial-wave balancing.
      c.peak_fraction = 0.85;
      c.align = {1, 1, 1, 1, 1, 1, 1};
      c.wave_tail = 1.0;
      c.kernel_us = 1;
      c.launch_us = 0;
      break;
  }
  return c;
}

std::string not_measured_note(GpuArch arch) {
  return fmt::format(
      "hwt has no backend for {} ({}): an estimate from the catalog's datasheet figures and "
      "assumed model constants (docs/shape.md, \"Beyond NVIDIA\"), not checked against hardware",
      arch == GpuArch::Tpu ? "TPUs" : "AMD GPUs", arch_name(arch));
}

GemmModel::GemmModel(const GpuSpec& gpu, Precision precision, GemmConstants constants)
    : gpu_(gpu), precision_(precision), c_(constants) {
  if (gpu_.peak_tflops(precision_) <= 0)
    fail_input("GPU {} has no {} rate in the catalog ({})", gpu_.name, precision_name(precision_),
               gpu_.origin);
}

GemmModel::GemmModel(const GpuSpec& gpu, Precision precision)
    : GemmModel(gpu, precision, default_constants(gpu.arch)) {}

GemmPrediction GemmModel::predict(const GemmShape& s) const {
  HWT_CHECK(s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0, "GEMM {}", shape_label(s));
  const int elem = precision_bytes(precision_);
  const double sms = gpu_.sms;
  const double sm_rate = gpu_.peak_tflops(precision_) * 1e12 * c_.peak_fraction / sms;
  const double bandwidth = gpu_.memory_bandwidth_gbs * 1e9 * c_.memory_fraction;
  const ArchRules rules = arch_rules(gpu_.arch);
  const int tk = rules.k_step_elements ? rules.k_step : rules.k_step / elem;

  GemmPrediction best;
  best.align_bytes = worst_alignment_bytes(s, elem);
  const int cls = align_class(best.align_bytes);
  best.align_factor = cls < kAlignClasses ? c_.align[static_cast<size_t>(cls)] : 1.0;
  const double bytes =
      static_cast<double>(s.batch) * static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * elem;
  const double t_mem = bytes / bandwidth;
  const double kernel = c_.kernel_us * 1e-6, launch = c_.launch_us * 1e-6;

  best.seconds = std::numeric_limits<double>::infinity();
  for (const Tile& tile : rules.tiles) {
    const int64_t ctas = ceil_div(s.m, tile.m) * ceil_div(s.n, tile.n) * s.batch;
    const double speed =
        tile_speed(tile, rules.tiles.front(), c_.tile_overhead) * best.align_factor;
    for (int split : rules.splits) {
      const int64_t k_steps = ceil_div(ceil_div(s.k, split), tk);
      if (split > 1 && k_steps < kMinKStepsPerSplit) break;
      const double t_tile = (static_cast<double>(k_steps) + c_.k_overhead) * 2.0 * tile.m * tile.n *
                            tk / (sm_rate * speed);
      const int64_t units = ctas * split;
      const double full = std::floor(static_cast<double>(units) / sms);
      const double rest = static_cast<double>(units) - full * sms;
      // A partial last wave: stream-K spreads it over all SMs (cost rest/sms) when there are
      // full waves to borrow from; wave_tail says how close the kernels come to that.
      double waves = full;
      if (rest > 0) waves += full >= 1 ? rest / sms + c_.wave_tail * (1 - rest / sms) : 1.0;
      const double t_compute = waves * t_tile;
      const double t_reduce =
          split > 1 ? 2.0 * split * static_cast<double>(s.batch * s.m * s.n) * 4 / bandwidth : 0;
      // Small GEMMs finish before the host has issued the next one: the issue rate is a floor.
      const double t = std::max(std::max(t_compute, t_mem) + t_reduce + kernel, launch);
      if (t < best.seconds) {
        best.seconds = t;
        best.tile_m = tile.m;
        best.tile_n = tile.n;
        best.split_k = split;
        best.tile_efficiency =
            static_cast<double>(s.m * s.n) /
            static_cast<double>(ceil_div(s.m, tile.m) * tile.m * ceil_div(s.n, tile.n) * tile.n);
        best.wave_efficiency = static_cast<double>(units) / ((full + (rest > 0)) * sms);
        best.memory_bound = t_mem > t_compute;
      }
    }
  }
  best.tflops = s.flops() / best.seconds / 1e12;
  return best;
}

}  // namespace hwt
