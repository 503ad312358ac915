// Data parallel's gradient traffic for one rank (docs/data_parallel.md). The flat gradient
// buffer is cut into buckets of about train.bucket_mb; during the last micro-batch's backward
// pass each bucket is all-reduced as soon as the pass has written its last gradient, so the
// communication overlaps the rest of the pass. Gradients arrive pre-weighted by each rank's
// share of the global batch, so the sum is the global batch's gradient.
#pragma once

#include <cstdint>
#include <vector>

#include "config/train_config.h"
#include "dist/communicator.h"
#include "model/model.h"

namespace hwt {

struct GradientBucket {
  int64_t offset = 0, count = 0;  // elements of the flat gradient buffer
  int64_t ready_stage = 0;        // the backward stage (Model::set_backward_hook) it waits for
};

// Buckets of at most bucket_elements, each within the decayed or the undecayed part of the
// flat buffer, cut from each part's end (where the last layers lie), in the order they become
// ready.
std::vector<GradientBucket> gradient_buckets(const Model& model, int64_t bucket_elements);

class GradientSync {
 public:
  GradientSync(Communicator& comm, Model& model, const TrainConfig& train);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Call before the last micro-batch's backward pass: its stages launch the buckets.
  void start();
  // After that backward pass: launches what is left and orders later work after the sums.
  void finish();
  const std::vector<GradientBucket>& buckets() const { return buckets_; }

 private:
  void launch_ready(int64_t stage);

  Communicator& comm_;
  Model& model_;
  std::vector<GradientBucket> buckets_;
  size_t launched_ = 0;
  DeviceBuffer bf16_;  // train.grad_reduce = bf16: the gradients as sent
};

}  // namespace hwt
