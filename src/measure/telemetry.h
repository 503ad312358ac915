// Telemetry of a run: a thread samples the GPU (NVML) and CPU package energy (RAPL) every
// ~100 ms; named windows (train, eval, total, a log interval) sum what happened while they
// were open. Only begin/end read counters on the caller's thread, so steps pay nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "measure/nvml.h"
#include "measure/rapl.h"

namespace hwt {

struct TelemetryOptions {
  std::optional<NvmlGpu> gpu;  // the run's GPU; none: no GPU telemetry
  std::string gpu_off_reason;  // why there is none
  double sample_period_s = 0.1;
  // Windows shorter than this integrate power over time instead of differencing the energy
  // counter, which advances in steps too coarse for them.
  double counter_min_window_s = 1.0;
};

// What a window saw; empty optionals are unknown (a reason says why), never zero.
struct WindowStats {
  double seconds = 0;
  std::optional<double> gpu_energy_j;
  std::string gpu_energy_method;  // "counter" or "power_x_time" when gpu_energy_j is known
  std::string gpu_energy_null_reason;
  std::optional<double> gpu_power_mean_w, gpu_util_mean_pct, gpu_util_peak_pct, sm_clock_mean_mhz,
      temperature_max_c, memory_used_peak_gib;
  std::optional<double> cpu_energy_j;
  std::string cpu_energy_null_reason;
  double process_cpu_util_pct = 0;  // CPU time of this process over wall time (100 = one core)

  nlohmann::json to_json() const;  // the W object of docs/training.md
};

class Telemetry {
 public:
  explicit Telemetry(TelemetryOptions o);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // {"name", "index", "power_limit_w", "energy_counter"}, or null (gpu_unavailable() says why).
  nlohmann::json gpu_json() const;
  const std::string& gpu_unavailable() const { return gpu_unavailable_; }
  std::optional<std::string> gpu_name() const;

  void begin(const std::string& window);  // opens it, or reopens it to add more time
  void end(const std::string& window);    // closes it until the next begin
  WindowStats stats(const std::string& window) const;
  // Closes an open window and opens it again, returning what it saw, without reading any
  // counter on the caller's thread: the boundary is the sampler's latest reading (up to one
  // sample period back). For frequent windows (log intervals), where two fresh readings per
  // boundary would cost the training thread milliseconds. A closed window is just opened.
  WindowStats roll(const std::string& window);

 private:
  using Clock = std::chrono::steady_clock;
  struct Sample {
    Clock::time_point t;
    NvmlReading gpu;
    std::optional<std::vector<uint64_t>> rapl;
    double cpu_s = 0;  // this process's user + system time
  };
  // Sums over a window's open time; readings hold until the next sample.
  struct Window {
    bool open = false;
    Sample prev;
    double seconds = 0, cpu_s = 0;
    double counter_j = 0, power_j = 0, power_s = 0, cpu_j = 0;
    bool counter_lost = false;  // a reading failed or the counter went back (driver reload)
    bool rapl_lost = false;
    double util_sum = 0, clock_sum = 0;
    int util_n = 0, clock_n = 0;
    std::optional<double> util_peak, temperature_max, memory_peak;
  };
  Sample take_sample() const;
  WindowStats summarize(const Window& w) const;                // with mu_ held
  void add_sample(Window& w, const Sample& s) const;           // advances an open window to s
  static void note_readings(Window& w, const NvmlReading& r);  // utilisation, clock, peaks
  void loop();

  TelemetryOptions opt_;
  std::unique_ptr<Nvml> nvml_;
  Rapl rapl_;
  std::string gpu_unavailable_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<std::string, Window> windows_;
  std::thread thread_;
};

}  // namespace hwt
