// One pass of a model over a data split, in evaluation mode (no dropout, no gradients).
#pragma once

#include "data/dataset.h"
#include "model/model.h"
#include "train/metrics.h"

namespace hwt {

// max_batches = 0 evaluates the whole split. The model must be planned for batch_size x max_len.
EvalResult evaluate(Model& model, const Dataset& data, const Split& split, int64_t batch_size,
                    int64_t max_len, int64_t max_batches = 0);

// How a task's model config gets its vocabulary and label counts from the data: 0 means
// "take it from the data"; a larger vocabulary (padding, e.g. to a multiple of 64) is allowed.
ModelConfig resolve_model_config(ModelConfig m, const Dataset& data);

}  // namespace hwt
