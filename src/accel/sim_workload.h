// A traced Workload recast as the simulator sees it: each op becomes stages that map onto one
// kind of hardware unit (MAC lanes for GEMMs and vector work, softmax units, layernorm units),
// with the sparsity of what each stage reads and writes. Identical stages are grouped into
// classes once per workload, so the fast model touches a few dozen classes per design instead
// of every op.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/trace/workload.h"
#include "config/model_config.h"
#include "model/pruning.h"
#include "workload/trace_step.h"

namespace hwt {
struct RunSparsity;
}

namespace hwt::accel {

// Fractions of zeros. Every tensor takes its operand role's constant (defaults: AccelTran's,
// Tuli & Jha 2023), except, with a run's measurements (hwt sim --sparsity), the tensors a
// pruning point produced: they take the fraction measured there (operand_points.h).
struct Sparsity {
  double activation = 0.5, weight = 0.5, gradient = 0.9;
  // Where each constant came from, for the report.
  std::string activation_source = kDefaultSource, weight_source = kDefaultSource,
              gradient_source = kDefaultSource;
  // Per PrunePoint, the fraction a run measured (empty where it did not prune), the file and
  // the run's thresholds.
  std::array<std::optional<double>, kPrunePoints> measured{};
  std::string measured_file{};
  PruneConfig measured_thresholds{};

  static constexpr const char* kDefaultSource = "AccelTran's constant";
  static Sparsity dense() { return {0, 0, 0, "--dense", "--dense", "--dense"}; }
  // A run's measurements (train/sparsity_log.h), every tensor the run did not prune dense:
  // nothing is guessed (docs/sim.md).
  static Sparsity measured_in(const RunSparsity& run);
  bool any_measured() const;
};

enum class StageKind : uint8_t { Gemm, Softmax, LayerNorm, Vector };
std::string_view stage_kind_name(StageKind k);

struct Stage {
  StageKind kind = StageKind::Vector;
  // GEMM: c[batch, m, n] = a[batch, m, k] . b[batch, k, n]; densities are 1 - sparsity.
  int64_t batch = 1, m = 0, n = 0, k = 0;
  Operand a = Operand::Activation, b = Operand::Weight, c = Operand::Activation;
  double dens_a = 1, dens_b = 1, dens_c = 1;
  // Softmax / layernorm: rows of length cols. Vector: `elements` items of `ops` lane ops in all.
  int64_t rows = 0, cols = 0, elements = 0;
  double ops = 0;
  // Non-GEMM stages: words read from / written to main memory (dense), and their densities.
  double in_words = 0, out_words = 0;
  double dens_in = 1, dens_out = 1;

  bool operator==(const Stage&) const = default;
};

struct SimOp {
  std::string label;  // "scope op", e.g. "layers.0.attn attention_forward"
  Phase phase = Phase::Other;
  size_t first_stage = 0, stage_count = 0;
};

struct SimWorkload {
  std::vector<SimOp> ops;
  std::vector<Stage> stages;     // every op's stages, in op order
  std::vector<size_t> class_of;  // per stage: index into classes
  std::vector<Stage> classes;    // distinct stages
  std::vector<double> class_count;
  int64_t batch = 0, seq = 0, parameters = 0;
  TraceMode mode = TraceMode::Train;
  Sparsity sparsity;
};

SimWorkload build_sim_workload(const Workload& w, TraceMode mode, const Sparsity& s);

// A run config's step as an accelerator runs it (its model, optimizer, batch and sequence;
// step_spec's defaults for batch or seq 0), in the design's own word format: train.precision is
// dropped, since an accelerator keeps one copy of each tensor in its word_bits and needs no loss
// scaling.
SimWorkload trace_sim_workload(RunConfig c, int64_t batch, int64_t seq, TraceMode mode,
                               const Sparsity& s);

}  // namespace hwt::accel
