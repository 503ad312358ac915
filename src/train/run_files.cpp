#include "train/run_files.h"

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/files.h"
#include "report/svg_plot.h"

namespace hwt {

MetricsLog::MetricsLog(const std::string& path, bool append) : path_(path) {
  f_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!f_) fail_input("cannot write {}: {}", path, std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (f_) std::fclose(f_);
}

void MetricsLog::write(const nlohmann::json& line) {
  const std::string s = line.dump() + "\n";
  if (std::fwrite(s.data(), 1, s.size(), f_) != s.size() || std::fflush(f_) != 0)
    fail("cannot write {}: {}", path_, std::strerror(errno));
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
