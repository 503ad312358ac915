// An accelerator design in the AccelTran / ELECTOR family: PEs of MAC lanes, softmax and
// layernorm units, activation / weight / mask buffers, a main memory, tile sizes, a loop
// order and sparsity support. Read from TOML (hardware/accel/*.toml; keys in docs/sim.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "accel/hardware_library.h"

namespace hwt::accel {

// GEMM tile loops: batch tiles, output-row tiles, output-column tiles, reduction tiles.
enum class Loop : uint8_t { B, I, J, K };
using LoopOrder = std::array<Loop, 4>;  // outermost first

// "bijk" -> {B, I, J, K}; throws InputError unless it is a permutation of b, i, j, k.
LoopOrder parse_loop_order(const std::string& s);
std::string loop_order_name(const LoopOrder& o);

struct MainMemory {
  std::string type = "lpddr3";  // a table of the memory library
  int banks = 16, ranks = 2, channels = 2;
  double bandwidth_gbps = 0;    // 0: from the library
  double access_energy_nj = 0;  // 0: from the library, per access of the library's size
};

// An FPGA design's device (the `[fpga]` table): its MACs are built from DSP slices, its weight
// and mask buffers from BRAM and its activation buffer from URAM, as `hwt memory` places a
// step's model state in BRAM and its activations and intermediates in URAM.
struct FpgaDevice {
  int64_t dsp_slices = 0, dsps_per_mac = 0;
  double bram_mb = 0, uram_mb = 0;  // MiB
};

struct AccelConfig {
  std::string name = "accelerator";
  std::string library;  // the module library the design names (`library`); empty: the default
  double clock_mhz = 700;
  int technology_nm = 14;
  int word_bits = 20;  // AccelTran: 20-bit fixed point (4 integer + 16 fraction bits)

  int64_t pes = 64;
  int64_t lanes_per_pe = 16;
  int64_t macs_per_lane = 16;
  int64_t softmax_per_pe = 4;
  int64_t layernorm_per_pe = 1;

  int64_t tile_b = 1, tile_x = 16, tile_y = 16;  // GEMM tile: [b, x, y] x [b, y, x]
  LoopOrder dataflow = {Loop::B, Loop::I, Loop::J, Loop::K};
  bool double_buffering = true;  // load the next tile while computing this one
  bool power_gating = true;      // idle compute modules do not leak

  double activation_buffer_mb = 4, weight_buffer_mb = 8, mask_buffer_mb = 1;
  double buffer_bandwidth_gbps = 370;  // per PE port into the (banked) buffers

  MainMemory memory;

  bool skip_zeros = true;  // pre-sparsity modules: zero-valued MACs are skipped
  bool compress = true;    // post-sparsity modules: data moves compressed with a bit mask

  std::optional<FpgaDevice> fpga;  // set: the design must fit this device

  int64_t lanes() const { return pes * lanes_per_pe; }
};

// Reads and validates a design; errors name the file and key. The library checks that the
// MAC lane width and the memory organisation exist.
AccelConfig load_accel_config(const std::string& path, const HardwareLibrary& lib);

// The module library a design file prices its parts with: the file its `library` key names
// (a path, or a name in hardware/accel/), else the default library.
HardwareLibrary design_library(const std::string& path);
void validate(const AccelConfig& c, const HardwareLibrary& lib, const std::string& where);

// The library entry for the design's main memory (bandwidth and energy, overrides applied).
struct ResolvedMemory {
  double bandwidth_gbps = 0;
  double energy_per_byte_nj = 0;
};
ResolvedMemory resolve_memory(const AccelConfig& c, const HardwareLibrary& lib);

}  // namespace hwt::accel
