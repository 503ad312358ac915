// Telemetry of one `hwt train` run (measure/telemetry.h): which windows are open when, the
// fields of a metrics line, and run.json's "telemetry" block with cost and MFU.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/run_config.h"
#include "measure/telemetry.h"
#include "train/run_cost.h"

namespace hwt {

// Windows "total" (the whole run), "train" (training steps only), "eval", and "log" (the
// training steps since the last metrics line). With train.telemetry = false it measures
// nothing and report() is null.
class RunTelemetry {
 public:
  explicit RunTelemetry(const TrainConfig& train);

  void begin(const std::string& window) {
    if (t_) t_->begin(window);
  }
  void end(const std::string& window) {
    if (t_) t_->end(window);
  }
  void pause_training();   // before an evaluation or a checkpoint
  void resume_training();  // after it
  // gpu_power_w, gpu_util_pct and gpu_energy_j of the log interval ending now (null when
  // unknown); the next interval starts.
  nlohmann::json next_log_interval();
  nlohmann::json report(const RunConfig& config, const RunCosting& costing) const;

 private:
  std::unique_ptr<Telemetry> t_;
};

}  // namespace hwt
