// Workload: the ops of one traced training step (or inference pass), as the TraceBackend
// recorded them (op and GEMM roles as typed values, FLOPs, bytes). Analyses (FLOP counts, shape
// advisor, step-time prediction, accelerator simulation) read this instead of keeping their own
// copy of what a transformer computes.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/gemm.h"
#include "core/dtype.h"

namespace hwt {

enum class OpKind : uint8_t {
  Gemm,         // linear layers and generic matmuls
  Attention,    // fused attention (its GEMMs are listed in gemms, its softmax in rows x cols)
  Norm,         // layernorm, optionally fused with residual and dropout
  Elementwise,  // dropout, casts, fills
  Embedding,
  Pooling,
  Loss,
  Reduction,
  Optimizer,
};

std::string_view op_kind_name(OpKind k);

struct OpRecord {
  Op op = Op::copy;
  std::string scope;  // layer label, e.g. "layers.3.mlp.fc1"
  Phase phase = Phase::Other;
  OpKind kind = OpKind::Elementwise;
  DType dtype = DType::F32;
  std::vector<GemmCall> gemms;  // matrix work inside the op
  int64_t rows = 0, cols = 0;   // row-wise work (norm, softmax, loss): rows of length cols
  int64_t elements = 0;         // elements the op produces (elementwise work)
  int64_t params = 0;           // optimizer ops: parameters updated
  double flops = 0;             // all floating-point operations, GEMM and otherwise
  // The share of the listed products' entries the kernels compute: about half for attention
  // under a causal mask, which skips the tiles above the diagonal (FLOPs above count them all).
  double computed_share = 1.0;
  double bytes_read = 0, bytes_written = 0;        // minimum device-memory traffic
  double elements_read = 0, elements_written = 0;  // the same traffic in elements
  std::string detail;                              // shapes, human-readable

  double gemm_flops() const;
};

// A parameter of the traced model: its name and the elements of its gradient in the flat buffers
// (alignment padding included), as the data-parallel estimate reduces them.
struct ParamRecord {
  std::string name;  // "layers.3.mlp.fc1.weight"
  int64_t elements = 0;
};

struct Workload {
  std::vector<OpRecord> ops;
  std::vector<ParamRecord> params;  // in the ParamStore's order (not written to JSON)
  int64_t batch = 0, seq = 0;
  int64_t parameters = 0;
  double peak_bytes = 0;  // backend memory allocated when the trace ended

  double flops(Phase phase) const;       // all FLOPs of ops in a phase
  double gemm_flops(Phase phase) const;  // matrix FLOPs only
  double total_flops() const;
  double total_bytes() const;
};

void to_json(nlohmann::json& j, const GemmCall& g);
void to_json(nlohmann::json& j, const OpRecord& r);
void to_json(nlohmann::json& j, const Workload& w);

}  // namespace hwt
