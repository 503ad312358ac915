#include "train/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace hwt {
namespace {

std::string duration(double s) {
  const int64_t t = static_cast<int64_t>(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60)
                   : fmt::format("{}m{:02}s", t / 60, t % 60);
}

}  // namespace

Progress::Progress(int64_t total_steps, bool enabled)
    : total_(total_steps), enabled_(enabled), tty_(isatty(fileno(stderr)) != 0) {}

void Progress::update(int64_t step, double loss, double lr, double tokens_per_s,
                      int64_t line_every) {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = total_ > 0 ? static_cast<double>(step) / static_cast<double>(total_) : 0;
  const std::string eta = frac > 0 ? duration(elapsed * (1 - frac) / frac) : "?";
  const std::string stats =
      fmt::format("step {}/{} loss {:.4f} lr {:.2e} {:.0f} tok/s elapsed {} eta {}", step, total_,
                  loss, lr, tokens_per_s, duration(elapsed), eta);
  if (tty_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(frac * kWidth);
    fmt::print(stderr, "\r[{}{}] {}\x1b[K", std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kWidth - filled), '.'), stats);
    std::fflush(stderr);
    bar_shown_ = true;
  } else if (step % line_every == 0 || step == total_) {
    fmt::print(stderr, "{}\n", stats);
  }
}

void Progress::message(const std::string& text) {
  if (!enabled_) return;
  fmt::print(stderr, "{}{}\n", bar_shown_ ? "\r\x1b[K" : "", text);
}

void Progress::finish() {
  if (enabled_ && bar_shown_) fmt::print(stderr, "\n");
  bar_shown_ = false;
}

}  // namespace hwt
