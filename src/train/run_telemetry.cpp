#include "train/run_telemetry.h"

#include "train/run_setup.h"

namespace hwt {
namespace {

// NVML finds the run's GPU by the PCI bus id CUDA gives it, so CUDA_VISIBLE_DEVICES and CUDA's
// device order cannot point telemetry at another GPU.
TelemetryOptions gpu_options(const TrainConfig& train) {
  TelemetryOptions o;
  const bool gpu = train.device == DeviceChoice::Cuda ||
                   (train.device == DeviceChoice::Auto && cuda_available());
  if (!gpu) {
    o.gpu_off_reason = "the run is on the CPU";
    return o;
  }
  const std::string bus_id = training_gpu_pci_bus_id();
  if (bus_id.empty())
    o.gpu_off_reason = "CUDA did not give the PCI bus id of the run's GPU";
  else
    o.gpu = NvmlGpu{bus_id, 0};
  return o;
}

nlohmann::json or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

RunTelemetry::RunTelemetry(const TrainConfig& train) {
  if (train.telemetry) t_ = std::make_unique<Telemetry>(gpu_options(train));
}

void RunTelemetry::pause_training() {
  end("train");
  end("log");
}

void RunTelemetry::resume_training() {
  begin("train");
  begin("log");
}

nlohmann::json RunTelemetry::next_log_interval() {
  if (!t_) return {{"gpu_power_w", nullptr}, {"gpu_util_pct", nullptr}, {"gpu_energy_j", nullptr}};
  const WindowStats s = t_->roll("log");
  return {{"gpu_power_w", or_null(s.gpu_power_mean_w)},
          {"gpu_util_pct", or_null(s.gpu_util_mean_pct)},
          {"gpu_energy_j", or_null(s.gpu_energy_j)}};
}

nlohmann::json RunTelemetry::report(const RunConfig& config, const RunCosting& costing) const {
  if (!t_) return nullptr;
  const WindowStats train = t_->stats("train"), total = t_->stats("total");
  nlohmann::json j = {{"gpu", t_->gpu_json()}};
  if (j["gpu"].is_null()) j["gpu_unavailable"] = t_->gpu_unavailable();
  j["train"] = train.to_json();
  j["eval"] = t_->stats("eval").to_json();
  j["total"] = total.to_json();

  j.update(cost_and_mfu(t_->gpu_name(), t_->gpu_unavailable(), train, total, config.train.precision,
                        costing));
  return j;
}

}  // namespace hwt
