// Which GEMMs of an fp8 training step run in fp8, and why the others stay in bf16. fp8 halves
// the operand bytes and doubles the tensor-core rate, but every fp8 operand is a copy that its
// producer must also write (in the K-major layout Hopper's fp8 GEMMs take, so the backward's
// transposed operands are copies too), and small GEMMs sit at the launch floor either way: the
// published fp8 recipes (Transformer Engine, torchao's float8) measure losses there and keep such
// GEMMs in bf16. The choice, per GEMM group, in this order:
//   1. attention products stay bf16: they run inside the flash-attention kernels;
//   2. m, n or k not a multiple of 16 stays bf16: Transformer Engine requires fp8 operands whose
//      contracted dimension is a multiple of 16 and the other of 8, and cuBLASLt's fp8 kernels
//      16-byte leading dimensions; hwt asks 16 of all three;
//   3. otherwise fp8 where the fp8 GEMM plus its casts is predicted faster than the bf16 GEMM.
// The casts are priced as hwt runs them (backend/fp8_linear.h): a kernel per copy of A and of B
// that reads the bf16 tensor and writes its fp8 copy (three bytes an element, and the gap between
// two kernels that the step estimate counts per op), and one byte more per element of C, which an
// fp8 GEMM still writes in bf16 where the GEMM model counts one byte.
#pragma once

#include <string>

#include "analysis/gemm_model.h"
#include "analysis/step_gemms.h"

namespace hwt {

struct Fp8Choice {
  bool fp8 = false;
  std::string reason;
  GemmPrediction bf16, fp8_gemm;
  double cast_seconds = 0;  // of the fp8 copies, when the GEMM runs in fp8

  // The chosen form's prediction; in fp8 its seconds include the casts.
  GemmPrediction chosen() const;
};

// `fp8` predicts in Precision::Fp8, `bf16` in Precision::Bf16, for the same GPU.
Fp8Choice choose_fp8(const StepGemm& g, const GemmModel& fp8, const GemmModel& bf16);

}  // namespace hwt
