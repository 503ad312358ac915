// What a run's GPU time cost and how well it used the GPU: price per GPU-hour (--price or the
// GPU catalog), cost, and MFU, for run.json's "telemetry".
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/precision.h"
#include "measure/telemetry.h"

namespace hwt {

struct RunCosting {
  std::optional<double> price_per_gpu_hour;  // --price; else the GPU catalog's
  int64_t tokens_trained = 0;                // by this run's training steps
  // One training step's traced FLOPs per token; called only when a GPU peak makes MFU possible.
  std::function<std::optional<double>()> flops_per_token;
};

// The keys price_per_gpu_hour, price_source, cost_usd {train, total}, mfu and, when mfu is
// null, mfu_null_reason. `gpu` is the NVML device name; without one `no_gpu` says why.
nlohmann::json cost_and_mfu(const std::optional<std::string>& gpu, const std::string& no_gpu,
                            const WindowStats& train, const WindowStats& total, Precision precision,
                            const RunCosting& costing);

}  // namespace hwt
