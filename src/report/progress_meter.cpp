#include "report/progress_meter.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "report/si_prefix.h"

namespace hwt {
namespace {

std::string duration(double s) {
  const auto t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

ProgressMeter::ProgressMeter(std::string task, std::string unit, bool enabled)
    : task_(std::move(task)),
      unit_(std::move(unit)),
      enabled_(enabled && isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressMeter::~ProgressMeter() {
  finish();
}

std::string ProgressMeter::line(const std::string& task, const std::string& unit, int64_t done,
                                int64_t total, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const std::string units = unit.empty() ? "" : " " + unit;
  std::string s = total > 0
                      ? fmt::format("{}: {}/{}{} ({:.0f}%)", task, done, total, units,
                                    100.0 * static_cast<double>(done) / static_cast<double>(total))
                      : fmt::format("{}: {}{}", task, done, units);
  if (rate > 0) s += fmt::format(", {}{}/s", si_prefixed(rate, 3), units);
  if (total > 0 && rate > 0 && done < total)
    s += ", " + duration(static_cast<double>(total - done) / rate) + " left";
  return s;
}

void ProgressMeter::update(int64_t done, int64_t total, const std::string& stage) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(100) && done < total) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  fmt::print(stderr, "\r{}\x1b[K",
             line(stage.empty() ? task_ : stage, unit_, done, total, seconds));
  std::fflush(stderr);
  shown_ = true;
}

void ProgressMeter::finish() {
  if (!shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace hwt
