// A stand-in libnvidia-ml.so.1 for telemetry tests on machines without a GPU. Every call reads
// "key value" lines from the file $FAKE_NVML_STATE, so a test scripts the readings as it goes:
// energy_mj, power_mw, util, sm_mhz, temp_c, mem_used, power_limit_mw, name, and bus_id with
// index: the one GPU's PCI bus id and NVML index (default 0000:19:00.0 and 0).
// FAKE_NVML_NO_ENERGY builds a library without nvmlDeviceGetTotalEnergyConsumption.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

namespace {

std::map<std::string, std::string> state() {
  std::map<std::string, std::string> m;
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return m;
  std::ifstream in(path);
  for (std::string k, v; in >> k >> v;) m[k] = v;
  return m;
}

// 0 (success) with the value, or 3 (not supported) when the file lacks the key.
template <typename T>
int get(const char* key, T* out) {
  const auto m = state();
  const auto it = m.find(key);
  if (it == m.end()) return 3;
  *out = static_cast<T>(std::stoull(it->second));
  return 0;
}

int dummy_device;

}  // namespace

extern "C" {

struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};

int nvmlInit_v2() {
  return state().count("init_fails") ? 999 : 0;
}
int nvmlShutdown() {
  return 0;
}
const char* nvmlErrorString(int r) {
  return r == 3 ? "Not Supported" : r == 6 ? "Not Found" : "Unknown Error";
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (index != 0) return 2;
  *device = &dummy_device;
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  const auto m = state();
  if (bus_id != (m.count("bus_id") ? m.at("bus_id") : "0000:19:00.0")) return 6;
  *device = &dummy_device;
  return 0;
}
int nvmlDeviceGetIndex(void*, unsigned* index) {
  *index = 0;
  get("index", index);
  return 0;
}
int nvmlDeviceGetName(void*, char* name, unsigned length) {
  const auto m = state();
  const std::string n = m.count("name") ? m.at("name") : "NVIDIA_H200";
  std::strncpy(name, n.c_str(), length);
  return 0;
}
#ifndef FAKE_NVML_NO_ENERGY
int nvmlDeviceGetTotalEnergyConsumption(void*, unsigned long long* mj) {
  return get("energy_mj", mj);
}
#endif
int nvmlDeviceGetPowerUsage(void*, unsigned* mw) {
  return get("power_mw", mw);
}
int nvmlDeviceGetUtilizationRates(void*, nvmlUtilization_t* u) {
  return get("util", &u->gpu);
}
int nvmlDeviceGetClockInfo(void*, int, unsigned* mhz) {
  return get("sm_mhz", mhz);
}
int nvmlDeviceGetTemperature(void*, int, unsigned* c) {
  return get("temp_c", c);
}
int nvmlDeviceGetMemoryInfo(void*, nvmlMemory_t* m) {
  return get("mem_used", &m->used);
}
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) {
  return get("power_limit_mw", mw);
}
}
