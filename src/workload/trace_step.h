// Traces one training step (forward, backward, optimizer) or one inference forward of a model
// config on the TraceBackend. Every analysis gets its op list from here.
#pragma once

#include <cstdint>

#include "config/model_config.h"
#include "config/train_config.h"
#include "workload/workload.h"

namespace hwt {

enum class TraceMode : uint8_t { Train, Infer };

struct TraceRequest {
  ModelConfig model;  // vocab_size and label counts must be set
  int64_t batch = 1, seq = 1;
  TraceMode mode = TraceMode::Train;
  DType dtype = DType::F32;  // activation / compute dtype
  OptimConfig optim;
  double max_grad_norm = 1.0;
};

Workload trace_step(const TraceRequest& r);

// Fills vocab and label counts a config left to the data (0) with stated stand-ins, so
// analyses can run without loading a dataset: 30522 tokens (BERT), 2 and 8 classes.
ModelConfig with_analysis_defaults(ModelConfig m);

}  // namespace hwt
