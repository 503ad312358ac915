// Progress of a long task (a sweep, a tokenizer's training, a compression, an import) on
// stderr: on a terminal, one line redrawn in place with the count, the rate and the time left;
// in a log or a pipe, nothing, so that logs hold results only. Training has its own output
// (train/progress.h), which also logs lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hwt {

class ProgressMeter {
 public:
  // `task` names the work ("sweep"), `unit` what is counted ("designs"); disabled (--quiet) or
  // with stderr not a terminal, the meter prints nothing.
  ProgressMeter(std::string task, std::string unit, bool enabled);
  ~ProgressMeter();
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // `done` of `total` (total 0: unknown), redrawn at most ten times a second; `stage` replaces
  // the task's name while it runs (e.g. "counting pairs").
  void update(int64_t done, int64_t total, const std::string& stage = {});
  // Clears the line (also done by the destructor).
  void finish();

  // The line update() draws: "sweep: 1200/5000 designs (24%), 850 designs/s, 4s left".
  static std::string line(const std::string& task, const std::string& unit, int64_t done,
                          int64_t total, double seconds);

 private:
  std::string task_, unit_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace hwt
