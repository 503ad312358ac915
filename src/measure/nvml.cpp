#include "measure/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

namespace hwt {
namespace {

// The few NVML declarations hwt uses (nvml.h is not on the build machines). NVML returns 0 on
// success; power and limits are in milliwatts, energy in millijoules, memory in bytes.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

}  // namespace

struct Nvml::Api {
  void* lib = nullptr;
  bool initialised = false;
  nvmlDevice_t device = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*handle_by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*get_index)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*get_name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;

  template <typename F>
  void bind(F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(lib, symbol));
  }
  std::string error(const char* call, nvmlReturn_t r) const {
    return fmt::format("{} failed: {}", call,
                       error_string ? error_string(r) : fmt::format("NVML error {}", r));
  }
};

Nvml::Nvml(const NvmlGpu& gpu) : api_(std::make_unique<Api>()), index_(gpu.index) {
  const char* env = std::getenv("HWT_NVML_LIBRARY");
  const std::string path = env && *env ? env : "libnvidia-ml.so.1";
  Api& a = *api_;
  a.lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!a.lib) {
    const char* why = dlerror();
    reason_ = fmt::format("cannot load NVML ({}): {}", path, why ? why : "unknown error");
    return;
  }
  a.bind(a.init, "nvmlInit_v2");
  a.bind(a.shutdown, "nvmlShutdown");
  a.bind(a.error_string, "nvmlErrorString");
  a.bind(a.handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  a.bind(a.handle_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  a.bind(a.get_index, "nvmlDeviceGetIndex");
  a.bind(a.get_name, "nvmlDeviceGetName");
  a.bind(a.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  a.bind(a.power_usage, "nvmlDeviceGetPowerUsage");
  a.bind(a.utilization, "nvmlDeviceGetUtilizationRates");
  a.bind(a.clock_info, "nvmlDeviceGetClockInfo");
  a.bind(a.temperature, "nvmlDeviceGetTemperature");
  a.bind(a.memory_info, "nvmlDeviceGetMemoryInfo");
  a.bind(a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  for (const auto& [fn, symbol] : {std::pair<bool, const char*>{a.init != nullptr, "nvmlInit_v2"},
                                   {a.shutdown != nullptr, "nvmlShutdown"},
                                   {a.handle_by_index != nullptr, "nvmlDeviceGetHandleByIndex_v2"},
                                   {gpu.pci_bus_id.empty() || a.handle_by_bus_id != nullptr,
                                    "nvmlDeviceGetHandleByPciBusId_v2"}}) {
    if (!fn) {
      reason_ = fmt::format("{} has no {}", path, symbol);
      return;
    }
  }
  if (const nvmlReturn_t r = a.init(); r != 0) {
    reason_ = a.error("nvmlInit_v2", r);
    return;
  }
  a.initialised = true;
  if (!gpu.pci_bus_id.empty()) {
    if (const nvmlReturn_t r = a.handle_by_bus_id(gpu.pci_bus_id.c_str(), &a.device); r != 0) {
      reason_ =
          a.error(fmt::format("nvmlDeviceGetHandleByPciBusId_v2({})", gpu.pci_bus_id).c_str(), r);
      return;
    }
    if (unsigned i = 0; a.get_index && a.get_index(a.device, &i) == 0) index_ = i;
  } else if (const nvmlReturn_t r = a.handle_by_index(gpu.index, &a.device); r != 0) {
    reason_ = a.error(fmt::format("nvmlDeviceGetHandleByIndex_v2({})", gpu.index).c_str(), r);
    return;
  }
  ok_ = true;
  char name[96] = {};
  name_ = a.get_name && a.get_name(a.device, name, sizeof(name) - 1) == 0
              ? std::string(name)
              : fmt::format("GPU {}", index_);
  if (unsigned mw = 0; a.power_limit && a.power_limit(a.device, &mw) == 0)
    power_limit_w_ = mw / 1e3;
  if (!a.total_energy) {
    energy_reason_ = fmt::format("{} has no nvmlDeviceGetTotalEnergyConsumption", path);
  } else if (unsigned long long mj = 0; const nvmlReturn_t r = a.total_energy(a.device, &mj)) {
    energy_reason_ = a.error("nvmlDeviceGetTotalEnergyConsumption", r);
  } else {
    energy_counter_ = true;
  }
}

Nvml::~Nvml() {
  if (api_->initialised) api_->shutdown();
  if (api_->lib) dlclose(api_->lib);
}

NvmlReading Nvml::read() const {
  NvmlReading s;
  if (!ok_) return s;
  const Api& a = *api_;
  if (unsigned mw = 0; a.power_usage && a.power_usage(a.device, &mw) == 0) s.power_w = mw / 1e3;
  if (nvmlUtilization_t u{}; a.utilization && a.utilization(a.device, &u) == 0) s.util_pct = u.gpu;
  if (unsigned mhz = 0; a.clock_info && a.clock_info(a.device, kClockSm, &mhz) == 0)
    s.sm_clock_mhz = mhz;
  if (unsigned c = 0; a.temperature && a.temperature(a.device, kTemperatureGpu, &c) == 0)
    s.temperature_c = c;
  if (nvmlMemory_t m{}; a.memory_info && a.memory_info(a.device, &m) == 0)
    s.memory_used_gib = static_cast<double>(m.used) / (1ull << 30);
  if (unsigned long long mj = 0; energy_counter_ && a.total_energy(a.device, &mj) == 0)
    s.energy_mj = mj;
  return s;
}

}  // namespace hwt
