#include "accel/sim_workload.h"

#include <algorithm>

#include "accel/operand_points.h"
#include "core/error.h"
#include "train/sparsity_log.h"

namespace hwt::accel {
namespace {

// The density of a tensor in `role`, produced by pruning point `p` if any: the run's measured
// fraction there, or else the role's constant.
double density(Operand role, const Sparsity& s, std::optional<PrunePoint> p = std::nullopt) {
  if (p && s.measured[static_cast<size_t>(*p)]) return 1 - *s.measured[static_cast<size_t>(*p)];
  switch (role) {
    case Operand::Activation:
      return 1 - s.activation;
    case Operand::Weight:
      return 1 - s.weight;
    case Operand::Gradient:
      return 1 - s.gradient;
  }
  return 1;
}

// What a non-GEMM stage moves is an activation in the forward pass and a gradient after it.
double phase_density(Phase p, const Sparsity& s) {
  switch (p) {
    case Phase::Forward:
      return 1 - s.activation;
    case Phase::Backward:
    case Phase::Optimizer:
      return 1 - s.gradient;
    case Phase::Other:
      return 1;
  }
  return 1;
}

void check_sparsity(const Sparsity& s) {
  for (double v : {s.activation, s.weight, s.gradient})
    if (!(v >= 0 && v < 1)) fail_input("sparsity {} must be within [0, 1)", v);
  for (const std::optional<double>& v : s.measured)
    if (v && !(*v >= 0 && *v <= 1)) fail_input("measured sparsity {} must be within [0, 1]", *v);
}

Stage gemm_stage(const GemmCall& g, const Sparsity& s, const GemmPoints& points) {
  Stage st;
  st.kind = StageKind::Gemm;
  st.batch = g.shape.batch;
  st.m = g.shape.m;
  st.n = g.shape.n;
  st.k = g.shape.k;
  st.a = operand_a(g.role);
  st.b = operand_b(g.role);
  // A product involving a gradient is a gradient (dX, dW); results live in the activation
  // buffer either way.
  st.c = (st.a == Operand::Gradient || st.b == Operand::Gradient) ? Operand::Gradient
                                                                  : Operand::Activation;
  st.dens_a = density(st.a, s, points.a);
  st.dens_b = density(st.b, s, points.b);
  st.dens_c = density(st.c, s, points.c);
  return st;
}

Stage row_stage(StageKind kind, int64_t rows, int64_t cols, double in_words, double out_words,
                double dens) {
  Stage st;
  st.kind = kind;
  st.rows = rows;
  st.cols = cols;
  st.in_words = in_words;
  st.out_words = out_words;
  st.dens_in = st.dens_out = dens;
  return st;
}

// `points`: per GemmCall of r, the pruning points behind its operands (empty: none).
void add_stages(const OpRecord& r, const Sparsity& s, const std::vector<GemmPoints>& points,
                std::vector<Stage>& out) {
  auto gemm = [&](size_t i) {
    return gemm_stage(r.gemms[i], s, points.empty() ? GemmPoints{} : points[i]);
  };
  // The accelerator moves elements in its own word format, whatever dtype a GPU would use.
  const double in_words = r.elements_read, out_words = r.elements_written;
  const double dens = phase_density(r.phase, s);
  switch (r.kind) {
    case OpKind::Gemm:
      // Bias and activation epilogues run in the lane's nonlinearity unit as results leave.
      for (size_t i = 0; i < r.gemms.size(); ++i) out.push_back(gemm(i));
      return;
    case OpKind::Attention: {
      // Scores (or, backward, the products before the softmax's backward), then the softmax,
      // then the remaining products. Each is its own stage: intermediates round-trip through
      // main memory (no fusion across stages).
      for (size_t i = 0; i < r.gemms.size(); ++i)
        if (before_softmax(r.gemms[i].role)) out.push_back(gemm(i));
      const double cells = static_cast<double>(r.rows * r.cols);
      const double reads = r.phase == Phase::Backward ? 2 * cells : cells;
      out.push_back(row_stage(StageKind::Softmax, r.rows, r.cols, reads, cells, dens));
      for (size_t i = 0; i < r.gemms.size(); ++i)
        if (!before_softmax(r.gemms[i].role)) out.push_back(gemm(i));
      return;
    }
    case OpKind::Norm:
      out.push_back(row_stage(StageKind::LayerNorm, r.rows, r.cols, in_words, out_words, dens));
      return;
    case OpKind::Loss:
      out.push_back(row_stage(StageKind::Softmax, r.rows, r.cols, in_words, out_words, dens));
      return;
    case OpKind::Elementwise:
    case OpKind::Embedding:
    case OpKind::Pooling:
    case OpKind::Reduction:
    case OpKind::Optimizer: {
      Stage st;
      st.kind = StageKind::Vector;
      st.ops = r.flops;  // one lane op per FLOP
      st.elements = std::max<int64_t>(r.elements, static_cast<int64_t>(in_words));
      st.in_words = in_words;
      st.out_words = out_words;
      st.dens_in = st.dens_out = dens;
      if (r.kind == OpKind::Optimizer && in_words > 0) {
        // Only the gradient read is sparse; parameters and moments are dense.
        const double g = static_cast<double>(r.params);
        const double dens_grad = density(Operand::Gradient, s, PrunePoint::ParamGrads);
        st.dens_in = (in_words - g + g * dens_grad) / in_words;
        st.dens_out = 1;
      }
      if (st.elements == 0 && st.in_words + st.out_words == 0) return;
      out.push_back(st);
      return;
    }
  }
}

}  // namespace

Sparsity Sparsity::measured_in(const RunSparsity& run) {
  Sparsity s{0, 0, 0, "not pruned by the run", "not pruned by the run", "not pruned by the run"};
  s.measured = run.fraction;
  s.measured_file = run.path;
  s.measured_thresholds = run.thresholds;
  return s;
}

bool Sparsity::any_measured() const {
  for (const std::optional<double>& v : measured)
    if (v) return true;
  return false;
}

std::string_view stage_kind_name(StageKind k) {
  switch (k) {
    case StageKind::Gemm:
      return "gemm";
    case StageKind::Softmax:
      return "softmax";
    case StageKind::LayerNorm:
      return "layernorm";
    case StageKind::Vector:
      return "vector";
  }
  return "?";
}

SimWorkload build_sim_workload(const Workload& w, TraceMode mode, const Sparsity& s) {
  check_sparsity(s);
  SimWorkload sw;
  sw.batch = w.batch;
  sw.seq = w.seq;
  sw.parameters = w.parameters;
  sw.mode = mode;
  sw.sparsity = s;
  const std::vector<std::vector<GemmPoints>> points =
      s.any_measured() ? gemm_points(w, mode) : std::vector<std::vector<GemmPoints>>{};
  const std::vector<GemmPoints> no_points;
  for (size_t i = 0; i < w.ops.size(); ++i) {
    const OpRecord& r = w.ops[i];
    SimOp op;
    const std::string op_label(op_name(r.op));
    op.label = r.scope.empty() ? op_label : r.scope + " " + op_label;
    op.phase = r.phase;
    op.first_stage = sw.stages.size();
    add_stages(r, s, points.empty() ? no_points : points[i], sw.stages);
    op.stage_count = sw.stages.size() - op.first_stage;
    if (op.stage_count > 0) sw.ops.push_back(std::move(op));
  }
  for (const Stage& st : sw.stages) {
    auto it = std::find(sw.classes.begin(), sw.classes.end(), st);
    if (it == sw.classes.end()) {
      sw.class_of.push_back(sw.classes.size());
      sw.classes.push_back(st);
      sw.class_count.push_back(1);
    } else {
      const auto i = static_cast<size_t>(it - sw.classes.begin());
      sw.class_of.push_back(i);
      sw.class_count[i] += 1;
    }
  }
  return sw;
}

SimWorkload trace_sim_workload(RunConfig c, int64_t batch, int64_t seq, TraceMode mode,
                               const Sparsity& s) {
  c.train.precision = Precision::Fp32;
  const StepSpec spec = step_spec(std::move(c), batch, seq, mode);
  return build_sim_workload(trace_step(spec), spec.mode, s);
}

}  // namespace hwt::accel
