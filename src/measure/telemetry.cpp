#include "measure/telemetry.h"

#include <sys/resource.h>

#include <algorithm>

namespace hwt {
namespace {

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return seconds_of(u.ru_utime) + seconds_of(u.ru_stime);
}

void keep_max(std::optional<double>& m, const std::optional<double>& v) {
  if (v) m = std::max(m.value_or(*v), *v);
}

// No board draws 10 kW: a larger step of the energy counter (over the gap between readings,
// plus a second for the counter's own update lag) is a reset, not energy.
constexpr double kMaxPlausibleW = 1e4;

}  // namespace

nlohmann::json WindowStats::to_json() const {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nullptr; };
  nlohmann::json j = {{"seconds", seconds},
                      {"gpu_energy_j", opt(gpu_energy_j)},
                      {"gpu_energy_method",
                       gpu_energy_j ? nlohmann::json(gpu_energy_method) : nlohmann::json(nullptr)}};
  if (!gpu_energy_j) j["gpu_energy_null_reason"] = gpu_energy_null_reason;
  j["gpu_power_mean_w"] = opt(gpu_power_mean_w);
  j["gpu_util_mean_pct"] = opt(gpu_util_mean_pct);
  j["gpu_util_peak_pct"] = opt(gpu_util_peak_pct);
  j["sm_clock_mean_mhz"] = opt(sm_clock_mean_mhz);
  j["temperature_max_c"] = opt(temperature_max_c);
  j["memory_used_peak_gib"] = opt(memory_used_peak_gib);
  j["cpu_energy_j"] = opt(cpu_energy_j);
  if (!cpu_energy_j) j["cpu_energy_null_reason"] = cpu_energy_null_reason;
  j["process_cpu_util_pct"] = process_cpu_util_pct;
  return j;
}

Telemetry::Telemetry(TelemetryOptions o) : opt_(std::move(o)) {
  if (opt_.gpu) {
    nvml_ = std::make_unique<Nvml>(*opt_.gpu);
    if (!nvml_->ok()) {
      gpu_unavailable_ = nvml_->reason();
      nvml_.reset();
    }
  } else {
    gpu_unavailable_ = opt_.gpu_off_reason;
  }
  thread_ = std::thread([this] { loop(); });
}

Telemetry::~Telemetry() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

nlohmann::json Telemetry::gpu_json() const {
  if (!nvml_) return nullptr;
  const auto limit = nvml_->power_limit_w();
  return {{"name", nvml_->name()},
          {"index", nvml_->index()},
          {"power_limit_w", limit ? nlohmann::json(*limit) : nlohmann::json(nullptr)},
          {"energy_counter", nvml_->has_energy_counter()}};
}

std::optional<std::string> Telemetry::gpu_name() const {
  if (!nvml_) return std::nullopt;
  return nvml_->name();
}

Telemetry::Sample Telemetry::take_sample() const {
  Sample s;
  if (nvml_) s.gpu = nvml_->read();
  if (rapl_.ok()) s.rapl = rapl_.read();
  s.cpu_s = process_cpu_seconds();
  s.t = Clock::now();
  return s;
}

void Telemetry::add_sample(Window& w, const Sample& s) const {
  if (s.t <= w.prev.t) return;  // the sampler's reading lost the race to a boundary's
  const double dt = std::chrono::duration<double>(s.t - w.prev.t).count();
  const NvmlReading& a = w.prev.gpu;
  const NvmlReading& b = s.gpu;
  w.seconds += dt;
  w.cpu_s += s.cpu_s - w.prev.cpu_s;
  if (a.power_w) {
    w.power_j += *a.power_w * dt;
    w.power_s += dt;
  }
  if (a.energy_mj && b.energy_mj) {
    const uint64_t step = *b.energy_mj - *a.energy_mj;  // modulo 2^64: survives a wrap
    if (static_cast<double>(step) / 1e3 > kMaxPlausibleW * (dt + 1))
      w.counter_lost = true;
    else
      w.counter_j += static_cast<double>(step) / 1e3;
  } else {
    w.counter_lost = true;
  }
  if (w.prev.rapl && s.rapl)
    w.cpu_j += rapl_.joules(*w.prev.rapl, *s.rapl);
  else
    w.rapl_lost = true;
  note_readings(w, b);
  w.prev = s;
}

void Telemetry::note_readings(Window& w, const NvmlReading& r) {
  if (r.util_pct) {
    w.util_sum += *r.util_pct;
    ++w.util_n;
  }
  if (r.sm_clock_mhz) {
    w.clock_sum += *r.sm_clock_mhz;
    ++w.clock_n;
  }
  keep_max(w.util_peak, r.util_pct);
  keep_max(w.temperature_max, r.temperature_c);
  keep_max(w.memory_peak, r.memory_used_gib);
}

void Telemetry::loop() {
  const auto period = std::chrono::duration<double>(opt_.sample_period_s);
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    lock.unlock();
    const Sample s = take_sample();
    lock.lock();
    for (auto& [name, w] : windows_)
      if (w.open) add_sample(w, s);
  }
}

void Telemetry::begin(const std::string& window) {
  const Sample s = take_sample();
  std::lock_guard lock(mu_);
  Window& w = windows_[window];
  if (w.open) return;
  w.open = true;
  w.prev = s;
  // The opening reading counts, so a window shorter than a sample period has figures too.
  note_readings(w, s.gpu);
}

void Telemetry::end(const std::string& window) {
  const Sample s = take_sample();
  std::lock_guard lock(mu_);
  auto it = windows_.find(window);
  if (it == windows_.end() || !it->second.open) return;
  add_sample(it->second, s);
  it->second.open = false;
}

WindowStats Telemetry::roll(const std::string& window) {
  std::unique_lock lock(mu_);
  auto it = windows_.find(window);
  if (it == windows_.end() || !it->second.open) {
    lock.unlock();
    begin(window);
    return {};
  }
  Window& w = it->second;
  const WindowStats closed = summarize(w);
  Window next;
  next.open = true;
  next.prev = w.prev;  // the sampler's latest reading: it advances every open window
  note_readings(next, next.prev.gpu);
  w = next;
  return closed;
}

WindowStats Telemetry::stats(const std::string& window) const {
  std::lock_guard lock(mu_);
  const auto it = windows_.find(window);
  return it == windows_.end() ? WindowStats{} : summarize(it->second);
}

WindowStats Telemetry::summarize(const Window& w) const {
  WindowStats r;
  r.seconds = w.seconds;
  if (r.seconds > 0) r.process_cpu_util_pct = 100 * w.cpu_s / r.seconds;
  if (!rapl_.ok())
    r.cpu_energy_null_reason = rapl_.reason();
  else if (w.rapl_lost)
    r.cpu_energy_null_reason = "a RAPL counter could not be read during the window";
  else
    r.cpu_energy_j = w.cpu_j;
  if (!nvml_) {
    r.gpu_energy_null_reason = gpu_unavailable_;
    return r;
  }
  if (w.power_s > 0) r.gpu_power_mean_w = w.power_j / w.power_s;
  if (w.util_n > 0) r.gpu_util_mean_pct = w.util_sum / w.util_n;
  if (w.clock_n > 0) r.sm_clock_mean_mhz = w.clock_sum / w.clock_n;
  r.gpu_util_peak_pct = w.util_peak;
  r.temperature_max_c = w.temperature_max;
  r.memory_used_peak_gib = w.memory_peak;
  if (nvml_->has_energy_counter() && !w.counter_lost && r.seconds >= opt_.counter_min_window_s) {
    r.gpu_energy_j = w.counter_j;
    r.gpu_energy_method = "counter";
  } else if (w.power_s > 0) {
    r.gpu_energy_j = w.power_j * r.seconds / w.power_s;  // unknown stretches at the mean
    r.gpu_energy_method = "power_x_time";
  } else {
    r.gpu_energy_null_reason =
        nvml_->has_energy_counter()
            ? "the window is too short for the energy counter and the GPU reports no power draw"
            : nvml_->energy_counter_reason() + ", and the GPU reports no power draw";
  }
  return r;
}

}  // namespace hwt
