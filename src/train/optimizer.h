// Optimizer: AdamW, Adan or SGD over the ParamStore's flat buffers. One step is at most two
// backend ops (gradient-norm reduction when clipping, then the fused update), with no host
// synchronisation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/train_config.h"
#include "dist/communicator.h"
#include "model/param_store.h"
#include "model/pruning.h"

namespace hwt {

class Optimizer {
 public:
  Optimizer(const OptimConfig& cfg, ParamStore& params, double max_grad_norm);
  void step(int64_t step, double lr);
  // ZeRO stage 1 (train.zero = 1): this rank keeps state for, and updates, only its shard of the
  // flat buffers, whose storage must split into comm.size() equal shards of whole 64-element
  // blocks (ParamStore::allocate). Each step then reduce-scatters the gradients, sums the
  // gradient norm across ranks, updates the shard and all-gathers the parameters.
  void shard(Communicator& comm);
  // Named flat state buffers (moments etc.): of the shard's size when sharded.
  std::vector<std::pair<std::string, Tensor>> state() const;
  // The first element of the shard and its elements within count() (all of it unsharded).
  int64_t shard_offset() const { return offset_; }
  int64_t shard_count() const { return count_; }
  // The whole state as a checkpoint holds it (count() elements each), gathered from every rank
  // when sharded (a collective: every rank calls it). The buffers own the gathered copies.
  struct FullState {
    std::vector<DeviceBuffer> buffers;
    std::vector<std::pair<std::string, Tensor>> tensors;
  };
  FullState full_state() const;
  size_t state_bytes() const;  // this rank's
  void zero_state();
  const OptimConfig& config() const { return cfg_; }
  ParamStore& params() const { return params_; }
  // fp16 dynamic loss scaling (train/loss_scaler.h): the gradients carry scale[0] (f32 [1] on
  // the device); steps divide it out and change nothing when the gradients overflowed. Each
  // step then computes grad_norm_sq(), the squared norm of the scaled gradients.
  void set_loss_scale(Tensor scale) { loss_scale_ = scale; }
  Tensor grad_norm_sq() const { return norm_sq_.tensor(DType::F32, Shape{1}); }
  // Whether steps compute grad_norm_sq() (clipping or loss scaling needs it).
  bool computes_grad_norm() const { return max_grad_norm_ > 0 || loss_scale_.defined(); }
  // DynaProp (model.prune.tau_train): steps prune the gradients after the norm, before the
  // update; null (the default) prunes nothing.
  void set_pruning(Pruning* pruning) { pruning_ = pruning; }

 private:
  OptimizerTensors tensors() const;
  Tensor grads() const;  // the gradients this rank updates with
  void allocate_state(int64_t elements);
  void gather_parameters();

  OptimConfig cfg_;
  ParamStore& params_;
  float max_grad_norm_;
  std::vector<std::pair<std::string, DeviceBuffer>> state_;
  DeviceBuffer norm_sq_;
  Tensor loss_scale_;
  Pruning* pruning_ = nullptr;
  std::vector<std::string> names_;
  Communicator* comm_ = nullptr;  // ZeRO-1
  int64_t offset_ = 0, count_ = 0, shard_size_ = 0;
  DeviceBuffer grad_shard_;  // the summed gradients of the shard
};

}  // namespace hwt
