// A design space: fixed keys plus a list of choices per swept key (hardware/accel/space_*.toml).
// Points are numbered 0..size()-1 in mixed radix, so a sample is just a set of indices.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "accel/accel_config.h"

namespace hwt::accel {

struct DesignSpace {
  std::string name;
  AccelConfig base;  // the fixed keys
  std::vector<int64_t> batch, tile_b, tile_xy, pes, lanes, macs, softmax;
  std::vector<double> act_mb, weight_mb, mask_mb;
  std::vector<LoopOrder> dataflows;
  std::vector<MainMemory> memories;

  uint64_t size() const;
  // The number of choices per swept key, in the order of the index's mixed-radix digits (batch
  // first, memory last): digits d_k < radices()[k] make the index sum d_k * prod_{j<k} r_j.
  std::vector<uint64_t> radices() const;
  uint64_t index_of(const std::vector<uint64_t>& digits) const;
  // The design at `index` and the workload batch it is evaluated with.
  AccelConfig design(uint64_t index, int64_t* batch_out) const;
};

DesignSpace load_design_space(const std::string& path, const HardwareLibrary& lib);

// `n` distinct indices drawn uniformly (all of them, in order, when n >= size()).
std::vector<uint64_t> sample_indices(const DesignSpace& s, uint64_t n, uint64_t seed);

}  // namespace hwt::accel
