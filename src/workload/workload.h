// Workload: the ops of one traced training step (or inference pass), as the TraceBackend
// recorded them. Analyses (FLOP counts, shape advisor, step-time prediction, accelerator
// simulation) read this instead of keeping their own copy of what a transformer computes.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
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

// What a GEMM operand holds: decides which buffer it lives in and which sparsity applies.
enum class Operand : uint8_t { Activation, Weight, Gradient };

std::string_view operand_name(Operand o);

// One (batched) GEMM: c[batch, m, n] = a[batch, m, k] · b[batch, k, n].
struct GemmDims {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  Operand a = Operand::Activation, b = Operand::Weight;
  double flops() const { return 2.0 * static_cast<double>(batch * m) * static_cast<double>(n * k); }
};

struct OpRecord {
  std::string op;     // backend op name, e.g. "linear_forward"
  std::string scope;  // layer label, e.g. "layers.3.mlp.fc1"
  Phase phase = Phase::Other;
  OpKind kind = OpKind::Elementwise;
  DType dtype = DType::F32;
  std::vector<GemmDims> gemms;  // matrix work inside the op
  int64_t rows = 0, cols = 0;   // row-wise work (norm, softmax, loss): rows of length cols
  int64_t elements = 0;         // elements the op produces (elementwise work)
  int64_t params = 0;           // optimizer ops: parameters updated
  double flops = 0;             // all floating-point operations, GEMM and otherwise
  double bytes_read = 0, bytes_written = 0;  // minimum device-memory traffic
  std::string detail;                        // shapes, human-readable

  double gemm_flops() const;
};

struct Workload {
  std::vector<OpRecord> ops;
  int64_t batch = 0, seq = 0;
  int64_t parameters = 0;
  double peak_bytes = 0;  // backend memory allocated when the trace ended

  double flops(Phase phase) const;       // all FLOPs of ops in a phase
  double gemm_flops(Phase phase) const;  // matrix FLOPs only
  double total_flops() const;
  double total_bytes() const;
};

void to_json(nlohmann::json& j, const GemmDims& g);
void to_json(nlohmann::json& j, const OpRecord& r);
void to_json(nlohmann::json& j, const Workload& w);

}  // namespace hwt
