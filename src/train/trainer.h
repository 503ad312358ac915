// The training loop behind `hwt train`: data, model, optimizer, schedule, gradient
// accumulation, periodic evaluation, early stopping, checkpoints, metrics and run report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/run_config.h"

namespace hwt {

struct TrainRequest {
  RunConfig config;
  std::string out_dir;
  std::string resume;  // checkpoint to continue from; empty starts fresh
  bool progress = true;
};

// Trains and returns what it wrote to out_dir/run.json.
nlohmann::json train(const TrainRequest& request);

}  // namespace hwt
