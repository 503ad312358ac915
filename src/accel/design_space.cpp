#include "accel/design_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "core/error.h"
#include "core/toml_reader.h"

namespace hwt::accel {
namespace {

constexpr const char* kWhat = "design space";

std::vector<double> positive_nums(const TomlReader& r, const std::string& key) {
  std::vector<double> out = r.numbers(key);
  for (double v : out)
    if (v <= 0) r.fail(key, fmt::format("must list positive numbers, got {}", v));
  return out;
}

// Picks element (index % size) and divides index by size: one mixed-radix digit.
template <class T>
const T& digit(const std::vector<T>& v, uint64_t& index) {
  const T& x = v[index % v.size()];
  index /= v.size();
  return x;
}

}  // namespace

std::vector<uint64_t> DesignSpace::radices() const {
  return {batch.size(),     tile_b.size(),  tile_xy.size(),   pes.size(),
          lanes.size(),     macs.size(),    softmax.size(),   act_mb.size(),
          weight_mb.size(), mask_mb.size(), dataflows.size(), memories.size()};
}

uint64_t DesignSpace::size() const {
  uint64_t n = 1;
  for (uint64_t k : radices()) n *= k;
  return n;
}

uint64_t DesignSpace::index_of(const std::vector<uint64_t>& digits) const {
  const std::vector<uint64_t> r = radices();
  HWT_CHECK(digits.size() == r.size(), "{} design digits, expected {}", digits.size(), r.size());
  uint64_t index = 0, scale = 1;
  for (size_t k = 0; k < r.size(); ++k) {
    HWT_CHECK(digits[k] < r[k], "design digit {} is {}, at most {}", k, digits[k], r[k] - 1);
    index += digits[k] * scale;
    scale *= r[k];
  }
  return index;
}

AccelConfig DesignSpace::design(uint64_t index, int64_t* batch_out) const {
  AccelConfig c = base;  // named after the space (set at load)
  *batch_out = digit(batch, index);
  c.tile_b = digit(tile_b, index);
  c.tile_x = c.tile_y = digit(tile_xy, index);
  c.pes = digit(pes, index);
  c.lanes_per_pe = digit(lanes, index);
  c.macs_per_lane = digit(macs, index);
  c.softmax_per_pe = digit(softmax, index);
  c.activation_buffer_mb = digit(act_mb, index);
  c.weight_buffer_mb = digit(weight_mb, index);
  c.mask_buffer_mb = digit(mask_mb, index);
  c.dataflow = digit(dataflows, index);
  c.memory = digit(memories, index);
  return c;
}

DesignSpace load_design_space(const std::string& path, const HardwareLibrary& lib) {
  const TomlReader r = TomlReader::from_file(path, kWhat);
  DesignSpace s;
  AccelConfig& b = s.base;
  s.name = r.string("name");
  b.name = s.name;
  b.clock_mhz = r.number("clock_mhz", b.clock_mhz);
  b.technology_nm = static_cast<int>(r.integer("technology_nm", b.technology_nm));
  b.word_bits = static_cast<int>(r.integer("word_bits", b.word_bits));
  b.layernorm_per_pe = r.integer("layernorm_units", b.layernorm_per_pe);
  b.buffer_bandwidth_gbps = r.number("buffer_bandwidth_gbps", b.buffer_bandwidth_gbps);
  b.double_buffering = r.boolean("double_buffering", b.double_buffering);
  b.power_gating = r.boolean("power_gating", b.power_gating);
  b.skip_zeros = r.boolean("skip_zeros", b.skip_zeros);
  b.compress = r.boolean("compress", b.compress);
  if (b.clock_mhz <= 0) r.fail("clock_mhz", "must be positive");
  if (b.layernorm_per_pe < 1) r.fail("layernorm_units", "must be positive");
  if (b.buffer_bandwidth_gbps <= 0) r.fail("buffer_bandwidth_gbps", "must be positive");

  const TomlReader c = r.table("choices");
  s.batch = c.positive_integers("batch");
  s.tile_b = c.positive_integers("tile_b");
  s.tile_xy = c.positive_integers("tile_xy");
  s.pes = c.positive_integers("pes");
  s.lanes = c.positive_integers("mac_lanes");
  s.macs = c.positive_integers("macs_per_lane");
  s.softmax = c.positive_integers("softmax_units");
  s.act_mb = positive_nums(c, "activation_mb");
  s.weight_mb = positive_nums(c, "weight_mb");
  s.mask_mb = positive_nums(c, "mask_mb");
  for (const std::string& d : c.strings("dataflow")) {
    try {
      s.dataflows.push_back(parse_loop_order(d));
    } catch (const InputError& e) {
      c.fail("dataflow", e.what());
    }
  }
  for (const TomlReader& m : c.tables("memory")) {
    MainMemory mm;
    mm.type = m.string("type");
    mm.banks = static_cast<int>(m.integer("banks"));
    mm.ranks = static_cast<int>(m.integer("ranks"));
    mm.channels = static_cast<int>(m.integer("channels"));
    m.reject_unknown();
    s.memories.push_back(mm);
  }
  c.reject_unknown();
  r.reject_unknown();

  // Every choice must be priceable: check each value against the library once.
  const std::string where = fmt::format("{} {}", kWhat, path);
  for (int64_t m : s.macs) {
    AccelConfig probe = b;
    probe.macs_per_lane = m;
    validate(probe, lib, where);
  }
  for (const MainMemory& m : s.memories) {
    AccelConfig probe = b;
    probe.memory = m;
    validate(probe, lib, where);
  }
  return s;
}

std::vector<uint64_t> sample_indices(const DesignSpace& s, uint64_t n, uint64_t seed) {
  const uint64_t size = s.size();
  std::vector<uint64_t> out;
  if (n >= size) {
    out.resize(size);
    std::iota(out.begin(), out.end(), uint64_t{0});
    return out;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> pick(0, size - 1);
  std::unordered_set<uint64_t> seen;
  while (out.size() < n) {
    const uint64_t i = pick(rng);
    if (seen.insert(i).second) out.push_back(i);
  }
  return out;
}

}  // namespace hwt::accel
