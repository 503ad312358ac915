#include "accel/accel_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "core/paths.h"
#include "core/toml_reader.h"

namespace hwt::accel {
namespace {

constexpr const char* kWhat = "accelerator";

// The library file a `library` key names; InputError naming the design's file and key.
std::string library_file(const TomlReader& r) {
  const std::string key = "library";
  try {
    return resolve_named_file(r.string(key), "hardware/accel", key);
  } catch (const InputError& e) {
    r.fail(key, std::string(e.what()).substr(key.size() + 1));  // its message starts "library "
  }
}

FpgaDevice read_fpga(const TomlReader& f) {
  FpgaDevice d;
  d.dsp_slices = f.positive_integer("dsp_slices");
  d.dsps_per_mac = f.positive_integer("dsps_per_mac");
  d.bram_mb = f.positive_number("bram_mb");
  d.uram_mb = f.positive_number("uram_mb");
  f.reject_unknown();
  return d;
}

// The design's MACs, weight + mask buffers and activation buffer within the device's DSP
// slices, BRAM and URAM.
void check_fits_device(const AccelConfig& c, const TomlReader& r) {
  const FpgaDevice& d = *c.fpga;
  const int64_t macs = c.lanes() * c.macs_per_lane;
  if (macs * d.dsps_per_mac > d.dsp_slices)
    r.fail("fpga.dsp_slices",
           fmt::format("{} is fewer than the {} MACs x {} DSP slices the design needs",
                       d.dsp_slices, macs, d.dsps_per_mac));
  if (c.weight_buffer_mb + c.mask_buffer_mb > d.bram_mb)
    r.fail("fpga.bram_mb",
           fmt::format("{} MiB cannot hold the weight and mask buffers ({} + {} MiB)", d.bram_mb,
                       c.weight_buffer_mb, c.mask_buffer_mb));
  if (c.activation_buffer_mb > d.uram_mb)
    r.fail("fpga.uram_mb", fmt::format("{} MiB cannot hold the activation buffer ({} MiB)",
                                       d.uram_mb, c.activation_buffer_mb));
}

const MemoryOrganisation* find_org(const MemorySpec& m, const MainMemory& mm) {
  for (const MemoryOrganisation& o : m.organisations)
    if (o.banks == mm.banks && o.ranks == mm.ranks && o.channels == mm.channels) return &o;
  return nullptr;
}

}  // namespace

LoopOrder parse_loop_order(const std::string& s) {
  LoopOrder o{};
  std::string seen;
  if (s.size() != 4) fail_input("dataflow '{}' must be a permutation of 'bijk'", s);
  for (size_t i = 0; i < 4; ++i) {
    const char c = s[i];
    if (seen.find(c) != std::string::npos || std::string("bijk").find(c) == std::string::npos)
      fail_input("dataflow '{}' must be a permutation of 'bijk'", s);
    seen += c;
    o[i] = c == 'b' ? Loop::B : c == 'i' ? Loop::I : c == 'j' ? Loop::J : Loop::K;
  }
  return o;
}

std::string loop_order_name(const LoopOrder& o) {
  std::string s;
  for (Loop l : o) s += "bijk"[static_cast<int>(l)];
  return s;
}

void validate(const AccelConfig& c, const HardwareLibrary& lib, const std::string& where) {
  if (!lib.modules.count(fmt::format("mac_lane_{}", c.macs_per_lane))) {
    std::string have;
    for (const auto& [name, m] : lib.modules)
      if (name.rfind("mac_lane_", 0) == 0) have += (have.empty() ? "" : ", ") + name.substr(9);
    fail_input("{}: pe.macs_per_lane={} has no MAC lane in {} (have {})", where, c.macs_per_lane,
               lib.module_file, have);
  }
  auto mem = lib.memories.find(c.memory.type);
  if (mem == lib.memories.end()) {
    std::string have;
    for (const auto& [name, m] : lib.memories) have += (have.empty() ? "" : ", ") + name;
    fail_input("{}: memory.type='{}' is not in {} (have {})", where, c.memory.type, lib.memory_file,
               have);
  }
  if (c.memory.access_energy_nj == 0 && !find_org(mem->second, c.memory)) {
    std::string have;
    for (const MemoryOrganisation& o : mem->second.organisations)
      have += fmt::format("{}{}-{}-{}", have.empty() ? "" : ", ", o.banks, o.ranks, o.channels);
    fail_input(
        "{}: memory {} with banks-ranks-channels {}-{}-{} is not in {} (have {}); or set "
        "memory.access_energy_nj",
        where, c.memory.type, c.memory.banks, c.memory.ranks, c.memory.channels, lib.memory_file,
        have);
  }
  if (c.word_bits < 1 || c.word_bits > 64)
    fail_input("{}: word_bits={} must be within 1..64", where, c.word_bits);
  if (c.technology_nm < lib.scaling.min_nm || c.technology_nm > lib.scaling.max_nm)
    fail_input("{}: technology_nm={} is outside {}..{} nm, the range of the scaling rule in {}",
               where, c.technology_nm, lib.scaling.min_nm, lib.scaling.max_nm, lib.module_file);
}

AccelConfig load_accel_config(const std::string& path, const HardwareLibrary& lib) {
  const TomlReader r = TomlReader::from_file(path, kWhat);
  AccelConfig c;
  c.name = r.string("name", c.name);
  if (r.has("library")) {
    library_file(r);  // it must exist; the report names it as the design does
    c.library = r.string("library");
  }
  c.clock_mhz = r.positive_number("clock_mhz", c.clock_mhz);
  c.technology_nm = static_cast<int>(r.positive_integer("technology_nm", c.technology_nm));
  c.word_bits = static_cast<int>(r.positive_integer("word_bits", c.word_bits));
  try {
    c.dataflow = parse_loop_order(r.string("dataflow", loop_order_name(c.dataflow)));
  } catch (const InputError& e) {
    r.fail("dataflow", e.what());
  }
  c.double_buffering = r.boolean("double_buffering", c.double_buffering);
  c.power_gating = r.boolean("power_gating", c.power_gating);

  const TomlReader pe = r.table("pe");
  c.pes = pe.positive_integer("count", c.pes);
  c.lanes_per_pe = pe.positive_integer("mac_lanes", c.lanes_per_pe);
  c.macs_per_lane = pe.positive_integer("macs_per_lane", c.macs_per_lane);
  c.softmax_per_pe = pe.positive_integer("softmax_units", c.softmax_per_pe);
  c.layernorm_per_pe = pe.positive_integer("layernorm_units", c.layernorm_per_pe);
  pe.reject_unknown();

  const TomlReader tile = r.table("tile");
  c.tile_b = tile.positive_integer("b", c.tile_b);
  c.tile_x = tile.positive_integer("x", c.tile_x);
  c.tile_y = tile.positive_integer("y", c.tile_y);
  tile.reject_unknown();

  const TomlReader buf = r.table("buffers");
  c.activation_buffer_mb = buf.positive_number("activation_mb", c.activation_buffer_mb);
  c.weight_buffer_mb = buf.positive_number("weight_mb", c.weight_buffer_mb);
  c.mask_buffer_mb = buf.positive_number("mask_mb", c.mask_buffer_mb);
  c.buffer_bandwidth_gbps = buf.positive_number("bandwidth_gbps", c.buffer_bandwidth_gbps);
  buf.reject_unknown();

  const TomlReader mem = r.table("memory");
  c.memory.type = mem.string("type");
  c.memory.banks = static_cast<int>(mem.positive_integer("banks", c.memory.banks));
  c.memory.ranks = static_cast<int>(mem.positive_integer("ranks", c.memory.ranks));
  c.memory.channels = static_cast<int>(mem.positive_integer("channels", c.memory.channels));
  if (mem.has("bandwidth_gbps")) c.memory.bandwidth_gbps = mem.positive_number("bandwidth_gbps");
  if (mem.has("access_energy_nj"))
    c.memory.access_energy_nj = mem.positive_number("access_energy_nj");
  mem.reject_unknown();

  if (r.has("sparsity")) {
    const TomlReader sp = r.table("sparsity");
    c.skip_zeros = sp.boolean("skip_zeros", c.skip_zeros);
    c.compress = sp.boolean("compress", c.compress);
    sp.reject_unknown();
  }
  if (r.has("fpga")) {
    c.fpga = read_fpga(r.table("fpga"));
    check_fits_device(c, r);
  }
  r.reject_unknown();
  validate(c, lib, fmt::format("{} {}", kWhat, path));
  return c;
}

HardwareLibrary design_library(const std::string& path) {
  const TomlReader r = TomlReader::from_file(path, kWhat);
  if (!r.has("library")) return default_hardware_library();
  return load_hardware_library(library_file(r),
                               require_shipped_file("hardware/accel/memories.toml"));
}

ResolvedMemory resolve_memory(const AccelConfig& c, const HardwareLibrary& lib) {
  const MemorySpec& m = lib.memories.at(c.memory.type);
  ResolvedMemory out;
  out.bandwidth_gbps = c.memory.bandwidth_gbps > 0 ? c.memory.bandwidth_gbps : m.bandwidth_gbps;
  double nj = c.memory.access_energy_nj;
  if (nj == 0) {
    const MemoryOrganisation* org = find_org(m, c.memory);
    HWT_CHECK(org != nullptr, "memory organisation of {} was not validated", c.name);
    nj = org->access_energy_nj;
  }
  out.energy_per_byte_nj = nj / m.access_bytes;
  return out;
}

}  // namespace hwt::accel
