#include "accel/hardware_library.h"

#include <cmath>

#include "core/error.h"
#include "core/paths.h"
#include "core/toml_reader.h"

namespace hwt::accel {
namespace {

constexpr const char* kModules = "module library";
constexpr const char* kMemories = "memory library";

ModuleSpec read_module(const TomlReader& r) {
  ModuleSpec m;
  m.area_um2 = r.positive_number("area_um2");
  m.dynamic_mw = r.non_negative_number("dynamic_mw");
  m.leakage_mw = r.non_negative_number("leakage_mw");
  m.width = static_cast<int>(r.integer("width", 0));
  if (m.width < 0) r.fail("width", "must not be negative");
  m.estimate = r.boolean("estimate", false);
  m.source = r.string("source");
  r.reject_unknown();
  return m;
}

BufferSpec read_buffer(const TomlReader& r) {
  BufferSpec b;
  b.area_mm2_per_mb = r.positive_number("area_mm2_per_mb");
  b.access_energy_nj = r.non_negative_number("access_energy_nj");
  b.reference_mb = r.positive_number("reference_mb");
  b.leakage_mw_per_mb = r.non_negative_number("leakage_mw_per_mb");
  b.access_bytes = r.positive_number("access_bytes");
  b.estimate = r.boolean("estimate", false);
  b.source = r.string("source");
  r.reject_unknown();
  return b;
}

void read_modules(HardwareLibrary& lib, const std::string& path) {
  const TomlReader r = TomlReader::from_file(path, kModules);
  lib.technology_nm = static_cast<int>(r.integer("technology_nm"));
  lib.clock_mhz = r.positive_number("clock_mhz");
  r.string("source");
  const TomlReader s = r.table("scaling");
  lib.scaling.area_exponent = s.number("area_exponent");
  lib.scaling.dynamic_exponent = s.number("dynamic_exponent");
  lib.scaling.leakage_exponent = s.number("leakage_exponent");
  lib.scaling.min_nm = static_cast<int>(s.integer("min_nm"));
  lib.scaling.max_nm = static_cast<int>(s.integer("max_nm"));
  s.boolean("estimate", true);
  lib.scaling.source = s.string("source");
  s.reject_unknown();
  const TomlReader mods = r.table("modules");
  for (const std::string& name : mods.keys()) lib.modules[name] = read_module(mods.table(name));
  const TomlReader bufs = r.table("buffers");
  for (const std::string& name : bufs.keys()) lib.buffers[name] = read_buffer(bufs.table(name));
  r.reject_unknown();
  for (const char* need :
       {"softmax", "layernorm", "pre_sparsity", "post_sparsity", "dataflow", "dma"})
    if (!lib.modules.count(need)) r.fail(std::string("modules.") + need, "is missing");
  for (const char* need : {"softmax", "layernorm"})
    if (lib.modules[need].width < 1)
      r.fail(std::string("modules.") + need + ".width", "must be a positive integer");
  for (const char* need : {"activation", "weight", "mask"})
    if (!lib.buffers.count(need)) r.fail(std::string("buffers.") + need, "is missing");
}

void read_memories(HardwareLibrary& lib, const std::string& path) {
  const TomlReader r = TomlReader::from_file(path, kMemories);
  const double access_bytes = r.positive_number("access_bytes");
  const bool bytes_estimate = r.boolean("access_bytes_estimate", false);
  for (const std::string& name : r.keys()) {
    if (name == "access_bytes" || name == "access_bytes_estimate") continue;
    const TomlReader m = r.table(name);
    MemorySpec spec;
    spec.access_bytes = access_bytes;
    spec.bandwidth_gbps = m.positive_number("bandwidth_gbps");
    const bool bandwidth_estimate = m.boolean("bandwidth_estimate", false);
    spec.estimate = bytes_estimate || bandwidth_estimate;
    spec.source = m.string("source");
    for (const TomlReader& o : m.tables("organisations")) {
      MemoryOrganisation org;
      org.banks = static_cast<int>(o.integer("banks"));
      org.ranks = static_cast<int>(o.integer("ranks"));
      org.channels = static_cast<int>(o.integer("channels"));
      if (org.banks < 1 || org.ranks < 1 || org.channels < 1)
        o.fail("banks", "banks, ranks and channels must be positive");
      org.access_energy_nj = o.positive_number("access_energy_nj");
      o.reject_unknown();
      spec.organisations.push_back(org);
    }
    m.reject_unknown();
    lib.memories[name] = std::move(spec);
  }
  if (lib.memories.empty()) r.fail("", "lists no memory types");
}

double factor(const HardwareLibrary& lib, int node_nm, double exponent) {
  if (node_nm < lib.scaling.min_nm || node_nm > lib.scaling.max_nm)
    fail_input("technology_nm={} is outside the scaling rule's range {}..{} nm", node_nm,
               lib.scaling.min_nm, lib.scaling.max_nm);
  return std::pow(static_cast<double>(node_nm) / lib.technology_nm, exponent);
}

}  // namespace

const ModuleSpec& HardwareLibrary::module(const std::string& name) const {
  auto it = modules.find(name);
  if (it == modules.end()) fail_input("{}: no module '{}'", module_file, name);
  return it->second;
}

const BufferSpec& HardwareLibrary::buffer(const std::string& name) const {
  auto it = buffers.find(name);
  if (it == buffers.end()) fail_input("{}: no buffer '{}'", module_file, name);
  return it->second;
}

double HardwareLibrary::area_factor(int node_nm) const {
  return factor(*this, node_nm, scaling.area_exponent);
}
double HardwareLibrary::dynamic_factor(int node_nm) const {
  return factor(*this, node_nm, scaling.dynamic_exponent);
}
double HardwareLibrary::leakage_factor(int node_nm) const {
  return factor(*this, node_nm, scaling.leakage_exponent);
}

HardwareLibrary load_hardware_library(const std::string& module_file,
                                      const std::string& memory_file) {
  HardwareLibrary lib;
  lib.module_file = module_file;
  lib.memory_file = memory_file;
  read_modules(lib, module_file);
  read_memories(lib, memory_file);
  return lib;
}

const HardwareLibrary& default_hardware_library() {
  static const HardwareLibrary lib =
      load_hardware_library(require_shipped_file("hardware/accel/modules_14nm.toml"),
                            require_shipped_file("hardware/accel/memories.toml"));
  return lib;
}

}  // namespace hwt::accel
