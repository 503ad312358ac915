// Small designs and workloads for the accelerator simulator's tests.
#pragma once

#include "accel/accel_config.h"
#include "accel/design_params.h"
#include "accel/hardware_library.h"
#include "accel/sim_workload.h"
#include "workload/trace_step.h"

namespace hwt::accel::testing {

// Round numbers for hand computation: 1 GHz, 2-byte words, 64 B/cycle main memory, 512 B/cycle
// per PE port, buffers large enough for everything, no compression.
inline AccelConfig hand_design() {
  AccelConfig c;
  c.name = "hand";
  c.clock_mhz = 1000;
  c.word_bits = 16;
  c.pes = 1;
  c.lanes_per_pe = 1;
  c.macs_per_lane = 16;
  c.softmax_per_pe = 1;
  c.layernorm_per_pe = 1;
  c.tile_b = 1;
  c.tile_x = c.tile_y = 16;
  c.activation_buffer_mb = c.weight_buffer_mb = 64;
  c.buffer_bandwidth_gbps = 512;
  c.memory = {"lpddr3", 16, 2, 2, 64, 0};
  c.skip_zeros = false;
  c.compress = false;
  return c;
}

inline DesignParams params(const AccelConfig& c) {
  return make_design_params(c, default_hardware_library());
}

// A small encoder: 2 layers, hidden 64, 4 heads, FFN 128, sequence classification.
inline StepSpec small_model(TraceMode mode = TraceMode::Train, int64_t batch = 4,
                            int64_t seq = 32) {
  StepSpec r;
  r.config.model.vocab_size = 1000;
  r.config.model.max_seq = 128;
  r.config.model.hidden = 64;
  r.config.model.heads = 4;
  r.config.model.ffn = 128;
  r.config.model.layers = 2;
  r.config.model.norm = NormPlacement::Post;
  r.config.model.num_labels = 2;
  r.batch = batch;
  r.seq = seq;
  r.mode = mode;
  return r;
}

inline SimWorkload small_workload(TraceMode mode = TraceMode::Train,
                                  const Sparsity& s = Sparsity{}) {
  const StepSpec r = small_model(mode);
  return build_sim_workload(trace_step(r), mode, s);
}

}  // namespace hwt::accel::testing
