// CpuBackend: the fp32 reference. OpenBLAS for GEMMs, OpenMP across rows for the rest.
// Reductions use a fixed partition of the rows, so results do not depend on the thread count.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"

namespace hwt {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);
  Device device() const override { return Device::Cpu; }
  std::string name() const override;
  int threads() const { return threads_; }

  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  void upload(Tensor dst, const void* host) override;
  void download(void* host, Tensor src) override;

  HWT_BACKEND_OPS(HWT_BACKEND_OP_OVERRIDE)

 private:
  int threads_;
};

// threads = 0: every core.
std::unique_ptr<Backend> make_cpu_backend(int threads = 0);

// Checks shared by the CPU op implementations.
void expect_f32(const Tensor& t, const char* what);
void expect_i32(const Tensor& t, const char* what);

// The factor every gradient is multiplied by (loss-scale removal, clipping), or skip when
// loss scaling is on and the scaled gradients overflowed (the optimizers).
struct GradPrep {
  float mult = 1.0f;
  bool skip = false;
};
GradPrep grad_prep(const GradClip& c);

// Rows are processed in chunks of this many; partial sums are combined in chunk order.
constexpr int64_t kReduceChunk = 64;

}  // namespace hwt
