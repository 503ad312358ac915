// What a training run writes into its output folder besides checkpoints: metrics.jsonl (one
// JSON object per logged step or evaluation), run.json (config, hardware, data, results,
// time per phase) and loss.svg.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hwt {

class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path, bool append);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  // Appends one line with a single write, flushed, so a crash leaves whole lines only.
  void write(const nlohmann::json& line);

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
};

struct RunCurves {
  std::vector<double> train_step, train_loss, valid_step, valid_loss;
  // Per logged interval where telemetry measured them: mean GPU power and utilisation.
  std::vector<double> gpu_step, gpu_power_w, gpu_util_pct;
};

// Writes DIR/loss.svg and, when the GPU was measured, DIR/power.svg (atomically).
void write_run_plots(const std::string& dir, const RunCurves& curves);

}  // namespace hwt
