// Timing work enqueued on a backend's device with the host clock: the backend synchronises
// before and after each batch of back-to-back calls, so launch gaps hide as they do in a
// training step and one synchronisation costs little of a batch.
#pragma once

#include <functional>

#include "backend/backend.h"

namespace hwt {

struct DeviceTiming {
  int warm = 1;                   // untimed calls first (plans, caches, clocks)
  int batches = 7;                // timed batches; the median batch counts
  double min_batch_s = 2e-3;      // each batch lasts at least this long...
  int max_calls_per_batch = 256;  // ...unless it would take more calls than this
};

// Median seconds per call of `fn`.
double median_seconds(Backend& backend, const std::function<void()>& fn,
                      const DeviceTiming& t = {});

}  // namespace hwt
