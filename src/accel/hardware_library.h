// The per-module power/area library and the main-memory table the simulator prices designs
// with (hardware/accel/modules_14nm.toml, hardware/accel/memories.toml). Kept apart from the
// accelerator description, as in Timeloop/Accelergy: a design says what it has, the library
// says what each part costs and where that number comes from.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hwt::accel {

struct ModuleSpec {
  double area_um2 = 0, dynamic_mw = 0, leakage_mw = 0;
  int width = 0;  // elements per cycle, for softmax and layernorm units
  bool estimate = false;
  std::string source;
};

struct BufferSpec {
  double area_mm2_per_mb = 0;
  double access_energy_nj = 0;  // per access of access_bytes, at reference_mb
  double reference_mb = 1;
  double leakage_mw_per_mb = 0;
  double access_bytes = 64;
  bool estimate = false;
  std::string source;
};

struct MemoryOrganisation {
  int banks = 0, ranks = 0, channels = 0;
  double access_energy_nj = 0;
};

struct MemorySpec {
  double bandwidth_gbps = 0;
  double access_bytes = 0;
  bool estimate = false;
  std::string source;
  std::vector<MemoryOrganisation> organisations;
};

struct TechScaling {
  double area_exponent = 2, dynamic_exponent = 1, leakage_exponent = 2;
  int min_nm = 5, max_nm = 180;
  std::string source;
};

struct HardwareLibrary {
  int technology_nm = 14;
  double clock_mhz = 700;                      // clock the dynamic powers were measured at
  std::map<std::string, ModuleSpec> modules;   // mac_lane_<n>, softmax, layernorm, ...
  std::map<std::string, BufferSpec> buffers;   // activation, weight, mask
  std::map<std::string, MemorySpec> memories;  // lpddr3, hbm, rram
  TechScaling scaling;
  std::string module_file, memory_file;

  const ModuleSpec& module(const std::string& name) const;
  const BufferSpec& buffer(const std::string& name) const;
  // Multipliers for a node relative to the library's node (1 at technology_nm).
  double area_factor(int node_nm) const;
  double dynamic_factor(int node_nm) const;
  double leakage_factor(int node_nm) const;
};

HardwareLibrary load_hardware_library(const std::string& module_file,
                                      const std::string& memory_file);

// The shipped library, loaded once.
const HardwareLibrary& default_hardware_library();

}  // namespace hwt::accel
