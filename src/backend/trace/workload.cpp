#include "backend/trace/workload.h"

#include <nlohmann/json.hpp>

namespace hwt {

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Gemm:
      return "gemm";
    case OpKind::Attention:
      return "attention";
    case OpKind::Norm:
      return "norm";
    case OpKind::Elementwise:
      return "elementwise";
    case OpKind::Embedding:
      return "embedding";
    case OpKind::Pooling:
      return "pooling";
    case OpKind::Loss:
      return "loss";
    case OpKind::Reduction:
      return "reduction";
    case OpKind::Optimizer:
      return "optimizer";
  }
  return "?";
}

double OpRecord::gemm_flops() const {
  double f = 0;
  for (const GemmCall& g : gemms) f += g.shape.flops();
  return f;
}

double Workload::flops(Phase phase) const {
  double f = 0;
  for (const OpRecord& r : ops)
    if (r.phase == phase) f += r.flops;
  return f;
}

double Workload::gemm_flops(Phase phase) const {
  double f = 0;
  for (const OpRecord& r : ops)
    if (r.phase == phase) f += r.gemm_flops();
  return f;
}

double Workload::total_flops() const {
  double f = 0;
  for (const OpRecord& r : ops) f += r.flops;
  return f;
}

double Workload::total_bytes() const {
  double b = 0;
  for (const OpRecord& r : ops) b += r.bytes_read + r.bytes_written;
  return b;
}

void to_json(nlohmann::json& j, const GemmCall& g) {
  j = {{"m", g.shape.m},
       {"n", g.shape.n},
       {"k", g.shape.k},
       {"batch", g.shape.batch},
       {"trans_a", g.shape.trans_a},
       {"trans_b", g.shape.trans_b},
       {"role", role_name(g.role)},
       {"a", operand_name(operand_a(g.role))},
       {"b", operand_name(operand_b(g.role))},
       {"dtype", dtype_name(g.dtype)},
       {"out_dtype", dtype_name(g.out_dtype)},
       {"accumulate", g.accumulate},
       {"bias", g.bias}};
}

void to_json(nlohmann::json& j, const OpRecord& r) {
  j = {{"op", op_name(r.op)},
       {"scope", r.scope},
       {"phase", phase_name(r.phase)},
       {"kind", op_kind_name(r.kind)},
       {"dtype", dtype_name(r.dtype)},
       {"gemms", r.gemms},
       {"rows", r.rows},
       {"cols", r.cols},
       {"elements", r.elements},
       {"params", r.params},
       {"flops", r.flops},
       {"bytes_read", r.bytes_read},
       {"bytes_written", r.bytes_written},
       {"elements_read", r.elements_read},
       {"elements_written", r.elements_written},
       {"detail", r.detail}};
}

void to_json(nlohmann::json& j, const Workload& w) {
  j = {{"batch", w.batch},
       {"seq", w.seq},
       {"parameters", w.parameters},
       {"peak_bytes", w.peak_bytes},
       {"ops", w.ops}};
}

}  // namespace hwt
