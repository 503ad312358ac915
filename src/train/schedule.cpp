#include "train/schedule.h"

#include <algorithm>
#include <cmath>

namespace hwt {

double learning_rate(const OptimConfig& o, int64_t step, int64_t total_steps) {
  if (o.warmup_steps > 0 && step <= o.warmup_steps)
    return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup_steps);
  if (o.schedule == Schedule::Constant) return o.lr;
  const int64_t decay_steps = std::max<int64_t>(1, total_steps - o.warmup_steps);
  const double progress = std::clamp(
      static_cast<double>(step - o.warmup_steps) / static_cast<double>(decay_steps), 0.0, 1.0);
  const double min_lr = o.lr * o.min_lr_ratio;
  const double shape = o.schedule == Schedule::Linear
                           ? 1.0 - progress
                           : 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress));
  return min_lr + (o.lr - min_lr) * shape;
}

}  // namespace hwt
