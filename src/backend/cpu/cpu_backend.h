// CpuBackend: the fp32 reference. OpenBLAS for GEMMs, OpenMP across rows for the rest.
// Reductions use a fixed partition of the rows, so results do not depend on the thread count.
#pragma once

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
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float value) override;
  void convert(Tensor dst, Tensor src) override;

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
  int threads_;
};

// Checks shared by the CPU op implementations.
void expect_f32(const Tensor& t, const char* what);
void expect_i32(const Tensor& t, const char* what);

// Rows are processed in chunks of this many; partial sums are combined in chunk order.
constexpr int64_t kReduceChunk = 64;

}  // namespace hwt
