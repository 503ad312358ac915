// Times GEMMs with cuBLASLt on the CUDA device present: random operands, a warm-up, then the
// median of repeated back-to-back runs between CUDA events. Defined only in CUDA builds
// (HWT_WITH_CUDA); callers guard their use with #ifdef and report an InputError otherwise.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/gemm_model.h"
#include "core/precision.h"

namespace hwt {

// True when the CUDA runtime finds at least one device.
bool cuda_device_present();

class GemmTimer {
 public:
  GemmTimer();  // InputError when no CUDA device is present
  ~GemmTimer();
  GemmTimer(const GemmTimer&) = delete;
  GemmTimer& operator=(const GemmTimer&) = delete;

  std::string device_name() const;
  int sm_count() const;

  // Median seconds per GEMM of the algorithm cuBLASLt's heuristic picks first, as PyTorch does.
  // fp32, tf32, bf16 and fp16 (fp32 accumulation); fp8 raises InputError.
  double seconds(const GemmShape& s, Precision p);

  // C = op(A)·op(B) for the given row-major host operands (stored as GemmShape says), rounded
  // to precision p on the device: checks the layouts `seconds` uses against a reference.
  std::vector<float> multiply(const GemmShape& s, Precision p, const std::vector<float>& a,
                              const std::vector<float>& b);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hwt
