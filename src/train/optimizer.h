// Optimizer: AdamW, Adan or SGD over the ParamStore's flat buffers. One step is at most two
// backend ops (gradient-norm reduction when clipping, then the fused update), with no host
// synchronisation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/train_config.h"
#include "model/param_store.h"
#include "model/pruning.h"

namespace hwt {

class Optimizer {
 public:
  Optimizer(const OptimConfig& cfg, ParamStore& params, double max_grad_norm);
  void step(int64_t step, double lr);
  // Named flat state buffers (moments etc.), for checkpoints.
  std::vector<std::pair<std::string, Tensor>> state() const;
  void zero_state();
  const OptimConfig& config() const { return cfg_; }
  ParamStore& params() const { return params_; }
  // fp16 dynamic loss scaling (train/loss_scaler.h): the gradients carry scale[0] (f32 [1] on
  // the device); steps divide it out and change nothing when the gradients overflowed. Each
  // step then computes grad_norm_sq(), the squared norm of the scaled gradients.
  void set_loss_scale(Tensor scale) { loss_scale_ = scale; }
  Tensor grad_norm_sq() const { return norm_sq_.tensor(DType::F32, Shape{1}); }
  // DynaProp (model.prune.tau_train): steps prune the gradients after the norm, before the
  // update; null (the default) prunes nothing.
  void set_pruning(Pruning* pruning) { pruning_ = pruning; }

 private:
  OptimizerTensors tensors() const;

  OptimConfig cfg_;
  ParamStore& params_;
  float max_grad_norm_;
  std::vector<std::pair<std::string, DeviceBuffer>> state_;
  DeviceBuffer norm_sq_;
  Tensor loss_scale_;
  Pruning* pruning_ = nullptr;
};

}  // namespace hwt
