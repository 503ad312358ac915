// What a training run writes into its output folder besides checkpoints: metrics.jsonl (one
// JSON object per logged step or evaluation), run.json (config, hardware, data, results,
// time per phase) and loss.svg; and which files of a folder are a run's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hwt {

// The files of a run in `dir` that exist, by name: run.json, metrics.jsonl, loss.svg,
// power.svg, sparsity.json, checkpoint.safetensors, best.safetensors (in that order), then the
// checkpoint-step<N>.safetensors of train.checkpoint_every by step. Empty when `dir` is no
// folder or holds none of them.
std::vector<std::string> run_files_in(const std::string& dir);

// Before a run starts: InputError when the filesystem of `dir` lacks room for one checkpoint of
// `checkpoint_bytes` (the first save would fail), a warning when it lacks room for all `count`
// the run will keep.
void check_room_for_checkpoints(const std::string& dir, uint64_t checkpoint_bytes, int64_t count);

class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path, bool append);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;
  // Appends one line straight to the OS, so a crash leaves whole lines only; a write that fails
  // part-way (a full disk) is cut back off before the InputError naming the file.
  void write(const nlohmann::json& line);

 private:
  int fd_ = -1;
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
