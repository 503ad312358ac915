// NVIDIA's management library (NVML), opened at run time so that hwt builds and runs without
// it: one GPU's name, power limit and the readings telemetry samples. hwt only reads; it never
// changes a GPU's settings.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace hwt {

// One sample of a GPU; a field is empty when the driver does not report it.
struct NvmlReading {
  std::optional<double> power_w;          // board power draw
  std::optional<double> util_pct;         // time a kernel ran over the driver's last period
  std::optional<double> sm_clock_mhz;     // current SM clock
  std::optional<double> temperature_c;    // GPU die
  std::optional<double> memory_used_gib;  // device-wide, every process
  std::optional<uint64_t> energy_mj;      // energy counter since the driver loaded
};

// Which GPU to open: the one at this PCI bus id when given (as CUDA names the device a run uses:
// NVML numbers GPUs in PCI order regardless of CUDA_VISIBLE_DEVICES and CUDA's own order), else
// NVML's index.
struct NvmlGpu {
  std::string pci_bus_id;
  unsigned index = 0;
};

class Nvml {
 public:
  // Loads $HWT_NVML_LIBRARY (default libnvidia-ml.so.1), initialises NVML and opens the GPU.
  // Never throws: on failure ok() is false and reason() says why.
  explicit Nvml(const NvmlGpu& gpu);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return ok_; }
  const std::string& reason() const { return reason_; }
  unsigned index() const { return index_; }  // NVML's numbering
  const std::string& name() const { return name_; }
  std::optional<double> power_limit_w() const { return power_limit_w_; }
  // Whether the GPU has a total-energy counter; if not, energy_counter_reason() says why.
  bool has_energy_counter() const { return energy_counter_; }
  const std::string& energy_counter_reason() const { return energy_reason_; }

  NvmlReading read() const;  // thread-safe: NVML's calls are

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  bool ok_ = false;
  std::string reason_;
  unsigned index_ = 0;
  std::string name_;
  std::optional<double> power_limit_w_;
  bool energy_counter_ = false;
  std::string energy_reason_;
};

}  // namespace hwt
