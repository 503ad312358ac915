// A linear layer whose weight [out, in] is a tensor train (model.tt.attention, model.tt.ffn):
// the cores are the parameters; each step merges them and multiplies in the order
// plan_tt_linear picks (model/tt_plan.h), all through the backend's GEMM ops.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/step_context.h"
#include "model/tt_plan.h"

namespace hwt {

class TtLinear {
 public:
  TtLinear() = default;
  // The cores start normal with the std that gives the merged weight entries variance std².
  TtLinear(ParamStore& ps, const std::string& name, TtChain chain, bool bias, float std);

  // Picks the contraction for up to max_rows rows and reserves its intermediates.
  void plan(ActivationArena& arena, DType dt, int64_t max_rows);
  // As Linear::forward/backward.
  void forward(const StepContext& c, Tensor x, Tensor y, Activation act = Activation::None,
               Tensor pre_act = {}) const;
  void backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx = false,
                Activation act = Activation::None, Tensor pre_act = {}) const;

  int64_t in() const { return chain_.in_dim(); }
  int64_t out() const { return chain_.out_dim(); }
  const TtChain& chain() const { return chain_; }
  const TtPlan& contraction() const { return plan_; }
  const std::vector<ParamStore::Handle>& cores() const { return cores_; }

 private:
  // A run of cores: a core itself (first == last) or a merge's output, in the arena.
  struct Run {
    size_t first = 0, last = 0;
    ActivationArena::Slot value = 0, grad = 0;
    ActivationArena::Slot grad32 = 0;  // a merged root's f32 weight gradient (not fp32 steps)
    bool core() const { return first == last; }
  };
  const Run& run(size_t first, size_t last) const;
  // The run (or its gradient) as a matrix of `rows` rows.
  Tensor value(const StepContext& c, const Run& r, int64_t rows) const;
  Tensor grad(const StepContext& c, const Run& r, int64_t rows) const;
  // Where linear_backward accumulates a root run's weight gradient (a merged one zeroed first).
  Tensor weight_grad(const StepContext& c, const Run& r, int64_t rows) const;
  // After linear_backward: a merged root's f32 gradient into its compute-dtype buffer.
  void finish_weight_grad(const StepContext& c, const Run& r) const;
  // The roots: the out run R' and the in run L' (factored), or the whole chain W.
  std::vector<std::pair<size_t, size_t>> roots() const;

  TtChain chain_;
  std::vector<ParamStore::Handle> cores_;
  ParamStore::Handle b_ = 0;
  bool has_bias_ = false;
  TtPlan plan_;
  std::vector<Run> runs_;                 // cores, then merges in plan order
  ActivationArena::Slot t_ = 0, dt_ = 0;  // x·L'ᵀ and its gradient (factored plans)
};

// The std σ of each of D normal cores (ranks r_0 … r_D) for which the merged entries have
// variance std²: an entry sums Π r_k (interior ranks) uncorrelated products of D independent
// zero-mean factors, so var(W) = Π r_k · σ^{2D}.
double tt_core_std(const std::vector<int64_t>& ranks, double std);

}  // namespace hwt
