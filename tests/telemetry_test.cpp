// Telemetry against a scripted stand-in NVML (tests/fake_nvml) and a fake powercap tree: energy
// by counter and by power x time, counter wrap and reset, missing functions and libraries.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "cli_util.h"
#include "measure/rapl.h"
#include "measure/telemetry.h"

namespace hwt {
namespace {

using test::TempDir;

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

class TelemetryTest : public ::testing::Test {
 protected:
  TelemetryTest() : dir("telemetry") {
    setenv("HWT_NVML_LIBRARY", HWT_FAKE_NVML, 1);
    setenv("FAKE_NVML_STATE", (dir / "nvml.txt").c_str(), 1);
    setenv("HWT_POWERCAP_ROOT", (dir / "powercap").c_str(), 1);
  }
  // Replaces the fake GPU's readings in one rename, so the library never reads half a file.
  void script(const std::string& lines) const {
    dir.write("nvml.tmp", lines);
    std::filesystem::rename(dir / "nvml.tmp", dir / "nvml.txt");
  }
  static TelemetryOptions gpu0(double counter_min_window_s = 0.05) {
    TelemetryOptions o;
    o.gpu = NvmlGpu{};
    o.sample_period_s = 0.01;
    o.counter_min_window_s = counter_min_window_s;
    return o;
  }
  TempDir dir;
};

TEST_F(TelemetryTest, CounterEnergyAndReadingsOverAWindow) {
  script(
      "energy_mj 1000000\npower_mw 200000\nutil 50\nsm_mhz 1500\ntemp_c 60\n"
      "mem_used 2147483648\npower_limit_mw 700000\nname NVIDIA_H200\n");
  Telemetry t(gpu0());
  const nlohmann::json gpu = t.gpu_json();
  EXPECT_EQ(gpu["name"], "NVIDIA_H200");
  EXPECT_EQ(gpu["index"], 0);
  EXPECT_DOUBLE_EQ(gpu["power_limit_w"].get<double>(), 700);
  EXPECT_EQ(gpu["energy_counter"], true);
  t.begin("w");
  sleep_ms(100);
  script(
      "energy_mj 1500000\npower_mw 200000\nutil 90\nsm_mhz 1700\ntemp_c 70\n"
      "mem_used 3221225472\n");
  sleep_ms(100);
  t.end("w");
  const WindowStats s = t.stats("w");
  EXPECT_NEAR(s.seconds, 0.2, 0.1);
  EXPECT_EQ(s.gpu_energy_method, "counter");
  EXPECT_DOUBLE_EQ(*s.gpu_energy_j, 500);
  EXPECT_DOUBLE_EQ(*s.gpu_power_mean_w, 200);
  EXPECT_DOUBLE_EQ(*s.gpu_util_peak_pct, 90);
  EXPECT_GT(*s.gpu_util_mean_pct, 50);
  EXPECT_LT(*s.gpu_util_mean_pct, 90);
  EXPECT_GT(*s.sm_clock_mean_mhz, 1500);
  EXPECT_LT(*s.sm_clock_mean_mhz, 1700);
  EXPECT_DOUBLE_EQ(*s.temperature_max_c, 70);
  EXPECT_DOUBLE_EQ(*s.memory_used_peak_gib, 3);
  // Closed windows stop counting; reopening adds the new time only.
  script("energy_mj 9000000\npower_mw 200000\n");
  sleep_ms(50);
  EXPECT_DOUBLE_EQ(*t.stats("w").gpu_energy_j, 500);
  t.begin("w");
  script("energy_mj 9100000\npower_mw 200000\n");
  sleep_ms(50);
  t.end("w");
  EXPECT_DOUBLE_EQ(*t.stats("w").gpu_energy_j, 600);
}

TEST_F(TelemetryTest, RollSplitsAWindowAtTheSamplersLatestReading) {
  script("energy_mj 1000000\npower_mw 100000\n");
  Telemetry t(gpu0());
  EXPECT_EQ(t.roll("log").seconds, 0);  // a window not open yet is opened
  sleep_ms(30);
  script("energy_mj 1002000\npower_mw 100000\n");
  sleep_ms(60);  // the sampler has read the new counter
  const WindowStats first = t.roll("log");
  script("energy_mj 1005000\npower_mw 100000\n");
  sleep_ms(60);
  t.end("log");
  const WindowStats second = t.stats("log");
  EXPECT_EQ(first.gpu_energy_method, "counter");
  EXPECT_DOUBLE_EQ(*first.gpu_energy_j, 2);
  EXPECT_DOUBLE_EQ(*second.gpu_energy_j, 3);  // from the roll's reading on, nothing twice
  EXPECT_GE(first.seconds + second.seconds, 0.14);  // the time since the first roll, once
}

TEST_F(TelemetryTest, ShortWindowIntegratesPowerOverTime) {
  script("energy_mj 1000\npower_mw 150000\n");
  Telemetry t(gpu0(10.0));
  t.begin("w");
  sleep_ms(80);
  t.end("w");
  const WindowStats s = t.stats("w");
  EXPECT_EQ(s.gpu_energy_method, "power_x_time");
  EXPECT_GT(s.seconds, 0.07);
  EXPECT_NEAR(*s.gpu_energy_j, 150 * s.seconds, 1e-9);
  EXPECT_FALSE(s.gpu_util_mean_pct);  // the fake reports no utilisation: unknown, not 0
  EXPECT_TRUE(s.to_json()["gpu_util_mean_pct"].is_null());
}

TEST_F(TelemetryTest, CounterWrapIsEnergyAndResetFallsBackToPower) {
  script("energy_mj 18446744073709550616\npower_mw 100000\n");  // 2^64 - 1000
  Telemetry t(gpu0());
  t.begin("wrap");
  sleep_ms(60);
  script("energy_mj 4000\npower_mw 100000\n");
  sleep_ms(60);
  t.end("wrap");
  EXPECT_EQ(t.stats("wrap").gpu_energy_method, "counter");
  EXPECT_DOUBLE_EQ(*t.stats("wrap").gpu_energy_j, 5);

  script("energy_mj 5000000000\npower_mw 100000\n");
  t.begin("reset");
  sleep_ms(60);
  script("energy_mj 1000\npower_mw 100000\n");  // the driver reloaded
  sleep_ms(60);
  t.end("reset");
  const WindowStats s = t.stats("reset");
  EXPECT_EQ(s.gpu_energy_method, "power_x_time");
  EXPECT_NEAR(*s.gpu_energy_j, 100 * s.seconds, 1e-9);
}

TEST_F(TelemetryTest, LibraryWithoutTheEnergyFunction) {
  setenv("HWT_NVML_LIBRARY", HWT_FAKE_NVML_NO_ENERGY, 1);
  script("util 40\n");
  Telemetry t(gpu0());
  EXPECT_EQ(t.gpu_json()["energy_counter"], false);
  EXPECT_TRUE(t.gpu_json()["power_limit_w"].is_null());
  t.begin("w");
  sleep_ms(80);
  t.end("w");
  const WindowStats s = t.stats("w");
  EXPECT_FALSE(s.gpu_energy_j);
  EXPECT_NE(s.gpu_energy_null_reason.find("has no nvmlDeviceGetTotalEnergyConsumption"),
            std::string::npos)
      << s.gpu_energy_null_reason;
  EXPECT_DOUBLE_EQ(*s.gpu_util_mean_pct, 40);
  const nlohmann::json j = s.to_json();
  EXPECT_TRUE(j["gpu_energy_j"].is_null());
  EXPECT_TRUE(j["gpu_energy_method"].is_null());
  EXPECT_EQ(j["gpu_energy_null_reason"], s.gpu_energy_null_reason);
}

TEST_F(TelemetryTest, GpuFoundByItsPciBusId) {
  script("bus_id 0000:3b:00.0\nindex 2\nname NVIDIA_H200\n");
  TelemetryOptions o;
  o.gpu = NvmlGpu{"0000:3b:00.0", 0};
  Telemetry found(o);
  ASSERT_TRUE(found.gpu_name()) << found.gpu_unavailable();
  EXPECT_EQ(found.gpu_json()["index"], 2);  // NVML's number for it, not CUDA's
  o.gpu = NvmlGpu{"0000:19:00.0", 0};
  Telemetry other(o);
  EXPECT_TRUE(other.gpu_json().is_null());
  EXPECT_EQ(other.gpu_unavailable(),
            "nvmlDeviceGetHandleByPciBusId_v2(0000:19:00.0) failed: Not Found");
}

TEST_F(TelemetryTest, MissingLibraryOrInitFailureGivesReasons) {
  setenv("HWT_NVML_LIBRARY", (dir / "no-such-libnvidia-ml.so.1").c_str(), 1);
  {
    Telemetry t(gpu0());
    EXPECT_TRUE(t.gpu_json().is_null());
    EXPECT_TRUE(t.gpu_unavailable().starts_with("cannot load NVML (")) << t.gpu_unavailable();
    t.begin("w");
    t.end("w");
    const nlohmann::json j = t.stats("w").to_json();
    EXPECT_TRUE(j["gpu_energy_j"].is_null());
    EXPECT_TRUE(j["gpu_power_mean_w"].is_null());
    EXPECT_EQ(j["gpu_energy_null_reason"], t.gpu_unavailable());
  }
  setenv("HWT_NVML_LIBRARY", HWT_FAKE_NVML, 1);
  script("init_fails 1\n");
  Telemetry t(gpu0());
  EXPECT_EQ(t.gpu_unavailable(), "nvmlInit_v2 failed: Unknown Error");
  TelemetryOptions cpu;
  cpu.gpu_off_reason = "the run is on the CPU";
  EXPECT_EQ(Telemetry(cpu).gpu_unavailable(), "the run is on the CPU");
}

void write_zone(const TempDir& dir, const std::string& zone, const std::string& name, uint64_t uj) {
  std::filesystem::create_directories(dir.path() / "powercap" / zone);
  dir.write("powercap/" + zone + "/name", name + "\n");
  // In one rename: the sampler may be reading it.
  dir.write("powercap/" + zone + "/energy.tmp", std::to_string(uj) + "\n");
  std::filesystem::rename(dir.path() / "powercap" / zone / "energy.tmp",
                          dir.path() / "powercap" / zone / "energy_uj");
  dir.write("powercap/" + zone + "/max_energy_range_uj", "2000000\n");
}

TEST_F(TelemetryTest, RaplPackagesAcrossAWrap) {
  write_zone(dir, "intel-rapl:0", "package-0", 1900000);
  write_zone(dir, "intel-rapl:1", "package-1", 100);
  write_zone(dir, "intel-rapl:0:0", "core", 5);  // inside package 0: not counted again
  write_zone(dir, "intel-rapl:2", "psys", 7);    // the whole platform: not counted
  const Rapl r;
  ASSERT_TRUE(r.ok()) << r.reason();
  EXPECT_EQ(*r.read(), (std::vector<uint64_t>{1900000, 100}));
  // Package 0 wraps at 2,000,000 uJ: 0.1 J before the wrap, 0.1 J after; package 1 0.3 J.
  EXPECT_DOUBLE_EQ(r.joules({1900000, 100}, {100000, 300100}), 0.5);

  TelemetryOptions o;
  o.sample_period_s = 0.01;
  Telemetry t(o);
  t.begin("w");
  write_zone(dir, "intel-rapl:0", "package-0", 1950000);
  sleep_ms(50);
  write_zone(dir, "intel-rapl:0", "package-0", 50000);
  sleep_ms(50);
  t.end("w");
  EXPECT_DOUBLE_EQ(*t.stats("w").cpu_energy_j, 0.15);
}

TEST_F(TelemetryTest, NoRaplGivesAReasonAndProcessCpuIsMeasured) {
  TelemetryOptions o;
  o.gpu_off_reason = "off";
  Telemetry t(o);
  // Spins for 0.2 s of this process's CPU time, however busy the machine is.
  auto cpu_s = [] { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; };
  t.begin("w");
  const double from = cpu_s();
  volatile double x = 0;
  while (cpu_s() - from < 0.2) x = x + 1;
  t.end("w");
  const WindowStats s = t.stats("w");
  EXPECT_FALSE(s.cpu_energy_j);
  EXPECT_EQ(s.cpu_energy_null_reason, "no RAPL package zones under " + (dir / "powercap"));
  EXPECT_NEAR(s.process_cpu_util_pct / 100 * s.seconds, 0.2, 0.03);
}

}  // namespace
}  // namespace hwt
