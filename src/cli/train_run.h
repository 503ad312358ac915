// Running one training as `hwt train` does, for the commands that train (train, compare
// --plan): the request with the run's price and the traced FLOPs for MFU, and the lines printed
// when it is done.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "train/trainer.h"

namespace hwt {

// price: --price as typed (empty: the GPU catalog's); InputError unless a positive number.
TrainRequest training_request(RunConfig config, std::string out_dir, const std::string& price,
                              bool progress);

// The final metrics, the files written and the telemetry summary line.
void print_run_summary(const nlohmann::json& run, const std::string& dir);

}  // namespace hwt
