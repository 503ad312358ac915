#include "measure/device_time.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace hwt {

double median_seconds(Backend& backend, const std::function<void()>& fn, const DeviceTiming& t) {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (int i = 0; i < t.warm; ++i) fn();
  backend.synchronize();
  auto t0 = Clock::now();
  fn();
  backend.synchronize();
  const double once = std::max(seconds_since(t0), 1e-7);
  const int calls =
      std::clamp(static_cast<int>(std::ceil(t.min_batch_s / once)), 1, t.max_calls_per_batch);
  std::vector<double> per_call;
  for (int b = 0; b < t.batches; ++b) {
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    backend.synchronize();
    per_call.push_back(seconds_since(t0) / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace hwt
