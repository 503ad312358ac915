#include "train/run_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "core/files.h"
#include "report/svg_plot.h"

namespace hwt {
namespace {

// The step of a checkpoint-step<N>.safetensors name, or -1 for any other name.
int64_t checkpoint_step(const std::string& name) {
  constexpr std::string_view kPrefix = "checkpoint-step", kSuffix = ".safetensors";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return -1;
  const std::string digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

}  // namespace

std::vector<std::string> run_files_in(const std::string& dir) {
  static const char* const kNamed[] = {"run.json",        "metrics.jsonl", "loss.svg",
                                       "power.svg",       "sparsity.json", "checkpoint.safetensors",
                                       "best.safetensors"};
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  std::vector<std::string> files;
  for (const char* name : kNamed)
    if (fs::exists(fs::path(dir) / name, ec)) files.emplace_back(name);
  std::vector<std::pair<int64_t, std::string>> steps;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (const int64_t step = checkpoint_step(name); step >= 0) steps.emplace_back(step, name);
  }
  std::sort(steps.begin(), steps.end());
  for (auto& [step, name] : steps) files.push_back(std::move(name));
  return files;
}

void check_room_for_checkpoints(const std::string& dir, uint64_t checkpoint_bytes, int64_t count) {
  const std::optional<uint64_t> free = free_bytes(dir);
  if (!free) return;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  if (*free < checkpoint_bytes)
    fail_input("not enough room in {} for a checkpoint: it takes {:.2f} GiB, {:.2f} GiB are free",
               dir, static_cast<double>(checkpoint_bytes) / kGiB,
               static_cast<double>(*free) / kGiB);
  const uint64_t all = checkpoint_bytes * static_cast<uint64_t>(std::max<int64_t>(count, 1));
  if (*free < all)
    warn(
        "{} has room for {} of the run's {} checkpoints of {:.2f} GiB ({:.2f} GiB free): free "
        "space or raise train.checkpoint_every before it fills up",
        dir, *free / checkpoint_bytes, count, static_cast<double>(checkpoint_bytes) / kGiB,
        static_cast<double>(*free) / kGiB);
}

MetricsLog::MetricsLog(const std::string& path, bool append) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
  if (fd_ < 0) fail_input("cannot write {}: {}", path, std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::write(const nlohmann::json& line) {
  const std::string s = line.dump() + "\n";
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd_, s.data() + done, s.size() - done);
    if (n >= 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    const int err = errno;
    const bool cut = before >= 0 && ::ftruncate(fd_, before) == 0;
    fail_input("cannot write {}: {}{}", path_, std::strerror(err),
               cut ? "" : " (its last line is incomplete)");
  }
}

void write_run_plots(const std::string& dir, const RunCurves& c) {
  PlotSpec p;
  p.title = "Training and validation loss";
  p.x_label = "optimizer step";
  p.y_label = "loss";
  p.series.push_back({"train", c.train_step, c.train_loss, true, false, ""});
  if (!c.valid_step.empty())
    p.series.push_back({"validation", c.valid_step, c.valid_loss, true, true, ""});
  write_file_atomic(dir + "/loss.svg", render_svg(p));
  if (c.gpu_step.empty()) return;
  PlotSpec g;
  g.title = "GPU power and utilisation per logged interval";
  g.x_label = "optimizer step";
  g.y_label = "W, %";
  g.series.push_back({"power (W)", c.gpu_step, c.gpu_power_w, true, false, ""});
  g.series.push_back({"utilisation (%)", c.gpu_step, c.gpu_util_pct, true, false, ""});
  write_file_atomic(dir + "/power.svg", render_svg(g));
}

}  // namespace hwt
