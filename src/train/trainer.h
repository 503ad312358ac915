// The training loop behind `hwt train`: data, model, optimizer, schedule, gradient
// accumulation, periodic evaluation, early stopping, checkpoints, metrics and run report.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/run_config.h"
#include "dist/world.h"
#include "train/fp8_training.h"

namespace hwt {

struct TrainRequest {
  RunConfig config;
  std::string out_dir;
  std::string resume;  // checkpoint to continue from; empty starts fresh
  bool progress = true;
  std::optional<double> price_per_gpu_hour = {};  // --price; else the GPU catalog's
  // FLOPs per token of one training step of the model (resolved against the data), for MFU;
  // the caller traces it (workload/ sits above train/). Unset: MFU is null.
  std::function<std::optional<double>(const RunConfig&)> flops_per_token = {};
  // Data parallel: this process's place in the job (run_setup.h's join_world()). Every rank
  // trains; rank 0 alone prints and writes out_dir.
  World world = {};
  // A checkpoint whose weights the run starts from (fresh optimizer, step 0); config's model
  // must be init_run_config's (fine_tune.h). Empty: random initialisation.
  std::string init = {};
  // train.precision = "fp8" on a GPU: which linear layers' products run in fp8 (the shape model
  // decides; analysis/fp8_layer_choice.h's fp8_chooser). Unset: every one whose sizes allow it.
  Fp8Chooser choose_fp8 = {};
};

// Trains and returns what it wrote to out_dir/run.json.
nlohmann::json train(const TrainRequest& request);

}  // namespace hwt
