// The CUDA backend: every Backend op on an NVIDIA GPU (one stream, cuBLASLt GEMMs, fused
// kernels). Activations may be f32, bf16 or f16; statistics, losses, gradients, master
// parameters and optimizer states are f32. Ops validate their tensors on the host, then enqueue
// kernels on the stream; nothing but download() and synchronize() waits for the device.
// Kernel-side input errors (token ids, targets out of range) set bits of a device error word that
// those two calls check. Stream capture records the enqueued ops into a CUDA graph instead
// (cuda_graph.cpp). docs/cuda.md describes the design; the op implementations are in
// cuda_ops_*.cpp, their kernels in the .cu files (cuda_kernels.h).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_gemm.h"
#include "backend/cuda/cuda_kernels.h"

namespace hwt {

struct CudaOptions {
  // fp32 GEMMs use TF32 tensor cores (10-bit mantissa products, fp32 accumulation).
  bool tf32 = false;
  // Each GEMM shape's algorithm is the fastest of cuBLASLt's first 8 suggestions, timed on its
  // first call (which synchronises), instead of the first suggestion. Faster steps; runs in
  // separate processes may pick different algorithms and so differ in rounding.
  bool gemm_autotune = false;
  // The attention backward sums dQ in a fixed order. false: the fused dK/dV kernel adds dQ
  // with fp32 atomics instead (fewer matrix products, faster; rounding varies run to run).
  bool deterministic_attention = true;
  // train.precision = "fp8": the GPU must have fp8 tensor cores (compute capability 8.9 or later).
  bool fp8 = false;
};

// Number of visible CUDA devices; 0 when there is no GPU or no driver (never throws).
int cuda_device_count();
// The PCI bus id of a visible device ("0000:19:00.0"); empty if CUDA cannot say (never throws).
std::string cuda_pci_bus_id(int device);

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, CudaOptions options);  // InputError for a device that is not there
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  Device device() const override { return Device::Cuda; }
  std::string name() const override;

  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  void upload(Tensor dst, const void* host) override;
  void download(void* host, Tensor src) override;
  void synchronize() override;
  void begin_capture() override;
  void end_capture() override;
  void end_capture_kept(uint64_t key) override;
  bool replay_kept(uint64_t key) override;
  void drop_kept(uint64_t key) override;
  void abort_capture() override;
  std::vector<std::string> take_notices() override;
  // The stream every op runs on (other streams, e.g. NCCL's, order themselves against it).
  cudaStream_t stream() const { return launch_.stream; }

  HWT_BACKEND_OPS(HWT_BACKEND_OP_OVERRIDE)

 private:
  // Grow-only device scratch shared by ops (stream order keeps uses apart).
  void* scratch(size_t bytes);
  // Grow-only device counters, zero between ops: the kernels that count on them leave them zero.
  unsigned* zeroed_counters(int64_t words);
  // Throws (after aborting the capture) when `call` happens inside a capture.
  void outside_capture(std::string_view call);
  // cuda::Gemm::run, except that inside a capture a new shape may not be autotuned.
  bool gemm(const cuda::GemmDesc& g);
  void check_device_errors();
  // Records a slow path once (take_notices returns it).
  void notice(std::string text);
  void reduce(Tensor x, Tensor out, bool squares, const char* op);
  cuda::OptCommon optimizer_common(const OptimizerTensors& t, const GradClip& clip) const;

  int device_ = 0;
  std::string device_name_;
  CudaOptions options_;
  cuda::Launch launch_;
  int* errors_host_ = nullptr;    // pinned
  double* partials_ = nullptr;    // reduction partials
  unsigned* counters_ = nullptr;  // zeroed_counters
  int64_t counter_words_ = 0;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  std::unique_ptr<cuda::Gemm> gemm_;
  bool capturing_ = false;
  std::set<std::string> noticed_;
  std::vector<std::string> new_notices_;
  // Executable graphs of the last two captures; the next capture updates graph_execs_[next_exec_].
  cudaGraphExec_t graph_execs_[2] = {nullptr, nullptr};
  int next_exec_ = 0;
  std::map<uint64_t, cudaGraphExec_t> kept_;  // end_capture_kept
  void drop_all_kept();
  cudaGraph_t finish_capture(std::string_view call);
};

namespace cuda {

// Host-side checks shared by the op files.
void expect_on_device(const Tensor& t, const char* what);
void expect_float(const Tensor& t, const char* what);  // f32, bf16 or f16
void expect_dtype(const Tensor& t, DType dt, const char* what);
void expect_same(const Tensor& t, const Tensor& ref, const char* what);  // dtype and numel
DropArgs drop_args(const Dropout& d);
// The kernels' view of fp8 copies `to` of a [rows, cols] tensor, checked (x and x_dt unset).
Fp8CastArgs fp8_cast_args(const Fp8Out& to, int64_t rows, int64_t cols, const char* op);

}  // namespace cuda
}  // namespace hwt
