// One pass of a model over a data split, in evaluation mode (no dropout, no gradients).
#pragma once

#include "data/dataset.h"
#include "dist/communicator.h"
#include "model/model.h"
#include "train/metrics.h"

namespace hwt {

// max_batches = 0 evaluates the whole split. The model must be planned for batch_size x max_len.
// With a communicator, each rank evaluates every size()-th batch and the totals are summed, so
// every rank returns the result of the whole split.
EvalResult evaluate(Model& model, const Dataset& data, const Split& split, int64_t batch_size,
                    int64_t max_len, int64_t max_batches = 0, Communicator* comm = nullptr);

// How a task's model config gets its vocabulary and label counts from the data: 0 means
// "take it from the data"; a larger vocabulary (padding, e.g. to a multiple of 64) is allowed.
ModelConfig resolve_model_config(ModelConfig m, const Dataset& data);

}  // namespace hwt
