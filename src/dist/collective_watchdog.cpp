#include "dist/collective_watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace hwt {

using Clock = std::chrono::steady_clock;

CollectiveWatchdog::CollectiveWatchdog(double timeout_s, int rank, std::function<void()> on_timeout)
    : timeout_s_(timeout_s), rank_(rank), on_timeout_(std::move(on_timeout)) {
  thread_ = std::thread([this] { run(); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CollectiveWatchdog::arm(std::string what, std::function<bool()> finished) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    what_ = std::move(what);
    finished_ = std::move(finished);
    since_ = Clock::now();
  }
  wake_.notify_all();
}

void CollectiveWatchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  finished_ = nullptr;
}

void CollectiveWatchdog::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    // Polled work is checked often; a blocking call only needs its deadline.
    wake_.wait_for(lock, std::chrono::milliseconds(finished_ ? 20 : 200));
    if (!armed_ || stop_) continue;
    if (finished_ && finished_()) {
      armed_ = false;
      finished_ = nullptr;
      continue;
    }
    const double waited = std::chrono::duration<double>(Clock::now() - since_).count();
    if (waited < timeout_s_) continue;
    std::fprintf(stderr,
                 "hwt: error: rank %d: %s waited %.0f s for the other ranks "
                 "(train.collective_timeout): a rank died or hangs; stopping\n",
                 rank_, what_.c_str(), waited);
    std::fflush(stderr);
    if (on_timeout_) on_timeout_();
    std::_Exit(1);
  }
}

}  // namespace hwt
