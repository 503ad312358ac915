// Learning-rate schedule: linear warmup, then constant, linear or cosine decay to
// lr * min_lr_ratio at the last step.
#pragma once

#include <cstdint>

#include "config/train_config.h"

namespace hwt {

double learning_rate(const OptimConfig& o, int64_t step, int64_t total_steps);

}  // namespace hwt
