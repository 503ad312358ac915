// Progress output: a redrawn bar on a terminal, plain lines otherwise (logs, CI, pipes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hwt {

class Progress {
 public:
  Progress(int64_t total_steps, bool enabled);
  // Called every step; redraws the bar (terminal) or prints a line every `line_every` steps.
  void update(int64_t step, double loss, double lr, double tokens_per_s, int64_t line_every);
  // A line of its own (evaluation results, notices), keeping the bar below it.
  void message(const std::string& text);
  void finish();

 private:
  int64_t total_;
  bool enabled_, tty_;
  bool bar_shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace hwt
