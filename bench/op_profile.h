// ProfilingBackend: forwards every op to another backend and charges the device time of each
// (synchronising before and after, so launches do not overlap) to "op" or "op@scope". Used to
// break a training step down by op; totals exceed the unprofiled step by the sync overhead.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "backend/backend.h"

namespace hwt::bench {

class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner) : in_(inner) {}
  const std::map<std::string, std::pair<double, int>>& totals() const { return totals_; }
  void clear() { totals_.clear(); }

  Device device() const override { return in_.device(); }
  std::string name() const override { return "profiled " + in_.name(); }
  void* allocate(size_t bytes) override { return in_.allocate(bytes); }
  void deallocate(void* p) override { in_.deallocate(p); }
  void upload(Tensor dst, const void* host) override { in_.upload(dst, host); }
  void download(void* host, Tensor src) override { in_.download(host, src); }
  void copy(Tensor dst, Tensor src) override {
    run("copy", [&] { in_.copy(dst, src); });
  }
  void fill(Tensor t, float v) override {
    run("fill", [&] { in_.fill(t, v); });
  }
  void convert(Tensor d, Tensor s) override {
    run("convert", [&] { in_.convert(d, s); });
  }
  void synchronize() override { in_.synchronize(); }
  void set_scope(std::string_view label, Phase phase) override {
    scope_ = std::string(label);
    phase_ = phase;
    in_.set_scope(label, phase);
  }

  void linear_forward(const LinearFwd& a) override {
    run("linear_forward", [&] { in_.linear_forward(a); });
  }
  void linear_backward(const LinearBwd& a) override {
    run("linear_backward", [&] { in_.linear_backward(a); });
  }
  void matmul(const Matmul& a) override {
    run("matmul", [&] { in_.matmul(a); });
  }
  void layernorm_forward(const LayerNormFwd& a) override {
    run("layernorm_forward", [&] { in_.layernorm_forward(a); });
  }
  void layernorm_backward(const LayerNormBwd& a) override {
    run("layernorm_backward", [&] { in_.layernorm_backward(a); });
  }
  void residual_forward(const ResidualFwd& a) override {
    run("residual_forward", [&] { in_.residual_forward(a); });
  }
  void residual_backward(const ResidualBwd& a) override {
    run("residual_backward", [&] { in_.residual_backward(a); });
  }
  void dropout_forward(const DropoutFwd& a) override {
    run("dropout_forward", [&] { in_.dropout_forward(a); });
  }
  void dropout_backward(const DropoutBwd& a) override {
    run("dropout_backward", [&] { in_.dropout_backward(a); });
  }
  void attention_forward(const AttentionFwd& a) override {
    run("attention_forward", [&] { in_.attention_forward(a); });
  }
  void attention_backward(const AttentionBwd& a) override {
    run("attention_backward", [&] { in_.attention_backward(a); });
  }
  void embedding_forward(const EmbeddingFwd& a) override {
    run("embedding_forward", [&] { in_.embedding_forward(a); });
  }
  void embedding_backward(const EmbeddingBwd& a) override {
    run("embedding_backward", [&] { in_.embedding_backward(a); });
  }
  void pool_forward(const PoolFwd& a) override {
    run("pool_forward", [&] { in_.pool_forward(a); });
  }
  void pool_backward(const PoolBwd& a) override {
    run("pool_backward", [&] { in_.pool_backward(a); });
  }
  void cross_entropy(const CrossEntropy& a) override {
    run("cross_entropy", [&] { in_.cross_entropy(a); });
  }
  void argmax_rows(Tensor l, Tensor o) override {
    run("argmax", [&] { in_.argmax_rows(l, o); });
  }
  void sum(Tensor x, Tensor o) override {
    run("sum", [&] { in_.sum(x, o); });
  }
  void sum_squares(Tensor x, Tensor o) override {
    run("sum_squares", [&] { in_.sum_squares(x, o); });
  }
  void adamw_step(const AdamWStep& a) override {
    run("adamw_step", [&] { in_.adamw_step(a); });
  }
  void adan_step(const AdanStep& a) override {
    run("adan_step", [&] { in_.adan_step(a); });
  }
  void sgd_step(const SgdStep& a) override {
    run("sgd_step", [&] { in_.sgd_step(a); });
  }
  void loss_scale_update(const LossScaleUpdate& a) override {
    run("loss_scale_update", [&] { in_.loss_scale_update(a); });
  }

 private:
  template <class F>
  void run(const char* op, F f) {
    in_.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    in_.synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // Layers differ only by index: group "layers.3.mlp" as "mlp".
    std::string where = scope_;
    if (where.rfind("layers.", 0) == 0) where = where.substr(where.find('.', 7) + 1);
    auto& t = totals_[std::string(op) + "@" + where + "/" + std::string(phase_name(phase_))];
    t.first += ms;
    t.second += 1;
  }

  Backend& in_;
  std::string scope_;
  Phase phase_ = Phase::Other;
  std::map<std::string, std::pair<double, int>> totals_;
};

}  // namespace hwt::bench
