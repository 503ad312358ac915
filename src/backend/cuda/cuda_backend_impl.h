// CudaBackend: the class behind make_cuda_backend (internal to src/backend/cuda).
// Ops validate their tensors on the host, then enqueue kernels on one stream; nothing but
// download() and synchronize() waits for the device. Kernel-side input errors (token ids,
// targets out of range) set bits of a device error word that those two calls check. Stream
// capture records the enqueued ops into a CUDA graph instead (cuda_graph.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_gemm.h"
#include "backend/cuda/cuda_kernels.h"

namespace hwt {

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, CudaOptions options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  Device device() const override { return Device::Cuda; }
  std::string name() const override;

  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  void upload(Tensor dst, const void* host) override;
  void download(void* host, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float value) override;
  void convert(Tensor dst, Tensor src) override;
  void synchronize() override;
  void begin_capture() override;
  void end_capture() override;
  void abort_capture() override;

  void linear_forward(const LinearFwd& a) override;
  void linear_backward(const LinearBwd& a) override;
  void matmul(const Matmul& a) override;
  void layernorm_forward(const LayerNormFwd& a) override;
  void layernorm_backward(const LayerNormBwd& a) override;
  void residual_forward(const ResidualFwd& a) override;
  void residual_backward(const ResidualBwd& a) override;
  void dropout_forward(const DropoutFwd& a) override;
  void dropout_backward(const DropoutBwd& a) override;
  void attention_forward(const AttentionFwd& a) override;
  void attention_backward(const AttentionBwd& a) override;
  void embedding_forward(const EmbeddingFwd& a) override;
  void embedding_backward(const EmbeddingBwd& a) override;
  void pool_forward(const PoolFwd& a) override;
  void pool_backward(const PoolBwd& a) override;
  void cross_entropy(const CrossEntropy& a) override;
  void argmax_rows(Tensor logits, Tensor out) override;
  void sum(Tensor x, Tensor out) override;
  void sum_squares(Tensor x, Tensor out) override;
  void adamw_step(const AdamWStep& a) override;
  void adan_step(const AdanStep& a) override;
  void sgd_step(const SgdStep& a) override;
  void loss_scale_update(const LossScaleUpdate& a) override;

 private:
  // Grow-only device scratch shared by ops (stream order keeps uses apart).
  void* scratch(size_t bytes);
  // Throws (after aborting the capture) when `call` happens inside a capture.
  void outside_capture(std::string_view call);
  // cuda::Gemm::run, except that inside a capture a new shape may not be autotuned.
  bool gemm(const cuda::GemmDesc& g);
  void check_device_errors();
  void reduce(Tensor x, Tensor out, bool squares, const char* op);
  cuda::OptCommon optimizer_common(const OptimizerTensors& t, const GradClip& clip,
                                   float weight_decay) const;

  int device_ = 0;
  std::string device_name_;
  CudaOptions options_;
  cuda::Launch launch_;
  int* errors_host_ = nullptr;  // pinned
  double* partials_ = nullptr;  // reduction partials
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  std::unique_ptr<cuda::Gemm> gemm_;
  bool capturing_ = false;
  // Executable graphs of the last two captures; the next capture updates graph_execs_[next_exec_].
  cudaGraphExec_t graph_execs_[2] = {nullptr, nullptr};
  int next_exec_ = 0;
};

namespace cuda {

// Host-side checks shared by the op files.
void expect_on_device(const Tensor& t, const char* what);
void expect_float(const Tensor& t, const char* what);  // f32, bf16 or f16
void expect_dtype(const Tensor& t, DType dt, const char* what);
void expect_same(const Tensor& t, const Tensor& ref, const char* what);  // dtype and numel
DropArgs drop_args(const Dropout& d);

}  // namespace cuda
}  // namespace hwt
