// What a stage (or a whole workload) did on a design: its latency and the event counts that
// energy is priced from. Both fidelities produce these, so both share one energy model.
#pragma once

namespace hwt::accel {

struct Activity {
  double cycles = 0;                                // latency
  double compute_cycles = 0;                        // the stage's compute alone (busiest unit type)
  double memory_cycles = 0;                         // its main-memory transfers alone
  double lane_cycles = 0;                           // busy cycles summed over MAC lanes
  double softmax_cycles = 0, layernorm_cycles = 0;  // busy cycles summed over units
  double dispatches = 0;                            // tiles handed to PEs (dataflow + DMA activity)
  double main_bytes = 0;                            // main memory <-> buffers, masks included
  double port_bytes = 0;                            // buffers <-> PEs, masks included
  double act_bytes = 0, weight_bytes = 0, mask_bytes = 0;  // accesses per buffer

  Activity& operator+=(const Activity& o) {
    add_scaled(o, 1);
    return *this;
  }

  void add_scaled(const Activity& o, double f) {
    cycles += f * o.cycles;
    compute_cycles += f * o.compute_cycles;
    memory_cycles += f * o.memory_cycles;
    lane_cycles += f * o.lane_cycles;
    softmax_cycles += f * o.softmax_cycles;
    layernorm_cycles += f * o.layernorm_cycles;
    dispatches += f * o.dispatches;
    main_bytes += f * o.main_bytes;
    port_bytes += f * o.port_bytes;
    act_bytes += f * o.act_bytes;
    weight_bytes += f * o.weight_bytes;
    mask_bytes += f * o.mask_bytes;
  }
};

}  // namespace hwt::accel
