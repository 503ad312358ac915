// TraceBackend: computes nothing; records every op with shapes, dtype, FLOPs and bytes into
// a Workload. Running a model's training step on it yields the step's full op list.
#pragma once

#include <string>

#include "backend/backend.h"
#include "workload/workload.h"

namespace hwt {

class TraceBackend final : public Backend {
 public:
  Device device() const override { return Device::Trace; }
  std::string name() const override { return "trace"; }

  const Workload& workload() const { return workload_; }
  Workload take_workload();
  // Starts a new op list (e.g. after model construction, to trace one step only).
  void clear();

  void* allocate(size_t bytes) override;
  void deallocate(void*) override {}
  void upload(Tensor, const void*) override {}
  void download(void* host, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor t, float value) override;
  void convert(Tensor dst, Tensor src) override;
  void set_scope(std::string_view label, Phase phase) override;

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
  OpRecord& record(std::string op, OpKind kind, DType dtype);

  Workload workload_;
  std::string scope_;
  Phase phase_ = Phase::Other;
  double allocated_ = 0;
};

}  // namespace hwt
