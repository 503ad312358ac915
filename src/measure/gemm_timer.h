// Times GEMMs as training runs them. Each GemmCall (a traced op's GEMM with its dtypes,
// accumulation, bias and activation, or a plain product) is replayed through the backend's
// matmul op on random operands: on a CUDA backend made from the run config, that is the same
// cuBLASLt path, epilogues and (with train.gemm_autotune) algorithm choice as `hwt train`.
#pragma once

#include <array>
#include <map>

#include "backend/backend.h"
#include "backend/gemm.h"

namespace hwt {

using MeasuredTimes = std::map<GemmCall, double>;  // seconds per GEMM

class GemmTimer {
 public:
  explicit GemmTimer(Backend& backend);

  // Median seconds of one call (measure/device_time.h), remembered per GemmCall.
  double seconds(const GemmCall& g);
  const MeasuredTimes& times() const { return times_; }
  Backend& backend() const { return backend_; }

 private:
  // Operand `slot` as a tensor of `dtype` and `shape`; when the GEMM reads it, it holds random
  // values in [-1, 1) shifted off zero (zeros would time faster).
  Tensor operand(size_t slot, DType dtype, Shape shape, bool read);
  // Fills t by tiling one block of random values over it.
  void randomize(Tensor t);

  struct Buffer {
    DeviceBuffer memory;
    bool random = false;  // holds `elements` random values of `dtype`
    DType dtype = DType::F32;
    int64_t elements = 0;
  };
  Backend& backend_;
  std::array<Buffer, 5> buffers_;  // a, b, c, bias, pre_act
  DeviceBuffer block_;             // f32 random values
  MeasuredTimes times_;
};

}  // namespace hwt
