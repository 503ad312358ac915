// Which pruning point (model/pruning.h) produced each GEMM operand of a traced step, so that
// the sparsity a run measured at a point lands on the tensors it was measured on (hwt sim
// --sparsity, docs/sim.md). The trace has no tensor identities: a block's dense layers are told
// apart by their scope ("layers.N.attn", "layers.N.mlp") and order (qkv before attn.out, fc1
// before fc2 in the forward pass; the reverse in the backward pass).
#pragma once

#include <optional>
#include <vector>

#include "backend/trace/workload.h"
#include "model/pruning.h"
#include "workload/trace_step.h"

namespace hwt::accel {

// The points behind a GEMM's A, B and C; empty: a tensor no point prunes.
struct GemmPoints {
  std::optional<PrunePoint> a, b, c;
};

// Whether a run's fraction at `p` describes tensors of a step in `mode`: DynaTran's points prune
// inference forwards only (never a training forward), the gradient points training only.
bool point_applies(PrunePoint p, TraceMode mode);

// Per op of `w`, per GemmCall of it, the points that apply in `mode`. InputError for a model
// whose blocks do not have two dense layers per sublayer (tensor-train layers, model.tt.*).
std::vector<std::vector<GemmPoints>> gemm_points(const Workload& w, TraceMode mode);

}  // namespace hwt::accel
