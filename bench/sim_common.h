// Workloads and the design space shared by the simulator benchmarks.
#pragma once

#include <map>

#include "accel/design_space.h"
#include "accel/sim_workload.h"
#include "core/paths.h"
#include "workload/trace_step.h"

namespace hwt::accel::bench {

// BERT-base (12 layers, hidden 768, 12 heads, FFN 3072, post-norm, 2-class head), seq 128.
inline TraceRequest bert_base(int64_t batch, TraceMode mode) {
  TraceRequest r;
  r.model.vocab_size = 30522;
  r.model.max_seq = 512;
  r.model.hidden = 768;
  r.model.heads = 12;
  r.model.ffn = 3072;
  r.model.layers = 12;
  r.model.norm = NormPlacement::Post;
  r.model.num_labels = 2;
  r.batch = batch;
  r.seq = 128;
  r.mode = mode;
  return r;
}

inline DesignSpace acceltran_space() {
  return load_design_space(require_shipped_file("hardware/accel/space_acceltran.toml"),
                           default_hardware_library());
}

// One traced workload per batch choice of the space.
inline std::map<int64_t, SimWorkload> workloads(const DesignSpace& s, TraceMode mode,
                                                TraceRequest (*model)(int64_t, TraceMode)) {
  std::map<int64_t, SimWorkload> out;
  for (int64_t b : s.batch)
    out.emplace(b, build_sim_workload(trace_step(model(b, mode)), mode, {}));
  return out;
}

}  // namespace hwt::accel::bench
