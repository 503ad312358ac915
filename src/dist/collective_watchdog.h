// Turns a collective that never finishes into an error. When another rank dies or hangs, the
// others would wait in their next collective forever; the watchdog ends such a process after
// train.collective_timeout seconds with one line naming the collective.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace hwt {

class CollectiveWatchdog {
 public:
  // on_timeout runs on the watchdog's thread before the process ends (e.g. ncclCommAbort).
  CollectiveWatchdog(double timeout_s, int rank, std::function<void()> on_timeout = {});
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  // Starts watching `what`. With `finished`, the watchdog polls it and stops watching once it
  // returns true (work that completes in the background); without, disarm() stops it.
  void arm(std::string what, std::function<bool()> finished = {});
  void disarm();

 private:
  void run();

  double timeout_s_;
  int rank_;
  std::function<void()> on_timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false, stop_ = false;
  std::string what_;
  std::function<bool()> finished_;
  std::chrono::steady_clock::time_point since_;
  std::thread thread_;
};

// Arms a watchdog for a blocking call's lifetime.
class WatchScope {
 public:
  WatchScope(CollectiveWatchdog& w, std::string what) : w_(w) { w_.arm(std::move(what)); }
  ~WatchScope() { w_.disarm(); }
  WatchScope(const WatchScope&) = delete;
  WatchScope& operator=(const WatchScope&) = delete;

 private:
  CollectiveWatchdog& w_;
};

}  // namespace hwt
