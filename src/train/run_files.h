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

struct LossCurve {
  std::vector<double> train_step, train_loss, valid_step, valid_loss;
};

// Writes DIR/loss.svg (atomically).
void write_loss_plot(const std::string& dir, const LossCurve& curve);

}  // namespace hwt
