// Linear and norm parameter groups: register their parameters and wrap the backend ops.
#pragma once

#include <string>

#include "model/step_context.h"

namespace hwt {

class Linear {
 public:
  Linear() = default;
  // `in` and `out` as stored. pad_out: output rows (of the weight and the bias), pad_in: input
  // columns of the weight, that only align the storage (ParamInfo::pad_rows, pad_cols).
  Linear(ParamStore& ps, const std::string& name, int64_t in, int64_t out, bool bias, float std,
         DimPad pad_out = {}, DimPad pad_in = {});
  // A bias-free linear map reusing an existing [out, in] parameter (tied LM head).
  static Linear tied(ParamStore::Handle weight, int64_t in, int64_t out);

  // y = act(x wᵀ + b); pre_act must be defined when act is not None. `made`: fp8 copies of x
  // its producer wrote (Fp8Copies), read where the products run in fp8.
  void forward(const StepContext& c, Tensor x, Tensor y, Activation act = Activation::None,
               Tensor pre_act = {}, const Fp8Copies& made = {}) const;
  // fused_linear_forward with this layer's weight and bias (a's x, y, norm, act and residual):
  // inference only.
  void forward_fused(const StepContext& c, FusedLinearFwd a) const;
  // dy is overwritten when act is not None; dx may be undefined (no input gradient needed).
  void backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx = false,
                Activation act = Activation::None, Tensor pre_act = {},
                const Fp8Copies& made = {}) const;
  // Its fp8 form in a step of `rows` rows (Fp8Linears::find); none outside fp8 training.
  Fp8Linear fp8(const StepContext& c, int64_t rows) const;
  bool has_bias() const { return has_bias_; }
  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  ParamStore::Handle weight() const { return w_; }

 private:
  ParamStore::Handle w_ = 0, b_ = 0;
  bool has_bias_ = false;
  int64_t in_ = 0, out_ = 0;
};

// A norm's parameters: gamma, and beta for LayerNorm (RMSNorm has none). The accessors give
// what the norm ops take: undefined beta, dbeta and mean for RMSNorm.
struct NormParams {
  NormParams() = default;
  // `dim` as stored, of which `pad` trailing entries are padding (zero gamma and beta).
  NormParams(ParamStore& ps, const std::string& name, int64_t dim, int64_t pad, NormKind kind);
  Tensor gamma(const StepContext& c) const { return c.params.compute(gamma_); }
  Tensor beta(const StepContext& c) const;
  Tensor dgamma(const StepContext& c) const { return c.params.grad(gamma_); }
  Tensor dbeta(const StepContext& c) const;
  // fused_linear_forward's arguments for y = (a product of) this norm of x over rows of
  // `width`: x is normalised on its way into the product (inference only).
  FusedLinearFwd fused_product(const StepContext& c, Tensor x, Tensor y, float eps,
                               int64_t width) const;
  // The saved per-row mean in `slot`, which RMSNorm neither writes nor reads.
  Tensor mean(const StepContext& c, ActivationArena::Slot slot) const;
  // The backward of this norm over rows of `width` (its saved mean and rstd in their slots):
  // dx = d/dx of dy, gamma's (and beta's) gradients accumulated.
  LayerNormBwd backward_args(const StepContext& c, ActivationArena::Slot mean_slot,
                             ActivationArena::Slot rstd_slot, Tensor x, Tensor dy, Tensor dx,
                             int64_t width) const;
  NormKind kind = NormKind::LayerNorm;

 private:
  ParamStore::Handle gamma_ = 0, beta_ = 0;
};

}  // namespace hwt
