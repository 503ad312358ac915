// Data-parallel training on N GPUs priced from the single-GPU step estimate, with the overlap
// model of Chen & Sköld: gradients are all-reduced in buckets as the backward pass finishes
// them, one bucket after another on one link, while the backward pass goes on. ZeRO stage 1
// reduce-scatters the gradients after the backward pass, updates a 1/N shard and all-gathers the
// parameters. Formulas and assumptions: docs/estimate.md, "Data parallel".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/step_estimate.h"
#include "hw/gpu_catalog.h"

namespace hwt {

// Ring collectives over `gpus` GPUs on a link whose ring reaches link.bus_gbs (NCCL's bus
// bandwidth). All-reduce: 2(N−1) steps, each GPU sends 2(N−1)/N × bytes. Reduce-scatter and
// all-gather (of a buffer of `bytes` in all): N−1 steps, (N−1)/N × bytes. Each step costs
// link.latency_us. Zero for one GPU.
double ring_all_reduce_seconds(double bytes, int64_t gpus, const LinkSpec& link);
double ring_reduce_scatter_seconds(double bytes, int64_t gpus, const LinkSpec& link);
inline double ring_all_gather_seconds(double bytes, int64_t gpus, const LinkSpec& link) {
  return ring_reduce_scatter_seconds(bytes, gpus, link);
}

// A parameter's gradient and when the backward pass has finished writing it (seconds from the
// start of the step).
struct GradientReady {
  std::string name;
  int64_t elements = 0;
  double ready_s = 0;
};

// Gradients reduced as one collective; ready when its last gradient is.
struct GradBucket {
  std::vector<std::string> params;
  double bytes = 0;
  double ready_s = 0;
};

// Packs gradients, in the order given (the order they become ready), into buckets of at most
// cap_bytes; a gradient larger than cap_bytes gets a bucket of its own.
std::vector<GradBucket> form_buckets(const std::vector<GradientReady>& grads,
                                     double bytes_per_element, double cap_bytes);

// The single-GPU step, as the data-parallel model needs it.
struct StepTimeline {
  double backward_end_s = 0;             // forward, loss and backward: all before the optimizer
  double optimizer_sharded_s = 0;        // the optimizer's work, which a ZeRO shard divides
  double optimizer_fixed_s = 0;          // its per-op gaps, which a shard does not
  std::vector<GradientReady> gradients;  // in the order the backward pass finishes them
  double parameters = 0;                 // gradient elements in all
  double single_s() const { return backward_end_s + optimizer_sharded_s + optimizer_fixed_s; }
};

// The traced step priced op by op (e from estimate_step(w, ...)), with each parameter's
// gradient ready at the end of the last backward op of the scope that names it.
StepTimeline step_timeline(const Workload& w, const StepEstimate& e);

struct DataParallelOptions {
  int64_t gpus = 1;
  LinkSpec link;
  double bucket_bytes = 25.0 * 1024 * 1024;  // train.bucket_mb, MiB as PyTorch's DDP counts
  double grad_bytes = 4;                     // per gradient element: train.grad_reduce
  double param_bytes = 4;                    // per parameter in ZeRO-1's all-gather: fp32 masters
  double optimizer_state_bytes = 0;          // the whole optimizer state (ZeRO-1 shards it)
};

struct DataParallelEstimate {
  int64_t gpus = 1;
  bool zero = false;
  double step_s = 0;
  double compute_s = 0;    // forward and backward
  double optimizer_s = 0;  // the optimizer (a 1/N shard of it with ZeRO-1)
  double comm_s = 0;       // the step's collectives, summed
  double exposed_s = 0;    // the part of comm_s the backward pass does not hide
  size_t buckets = 0;      // all-reduces (0 with ZeRO-1: one reduce-scatter, one all-gather)
  double scaling = 1;      // throughput at N / (N × throughput at 1); batch per rank fixed
  double optimizer_state_saved_bytes = 0;  // per rank, against one GPU holding all of it
};

// train.zero=0: every rank all-reduces every gradient, bucket by bucket, overlapped.
DataParallelEstimate estimate_ddp(const StepTimeline& t, const DataParallelOptions& o);
// train.zero=1: reduce-scatter, optimizer on a shard, all-gather, none overlapped.
DataParallelEstimate estimate_zero1(const StepTimeline& t, const DataParallelOptions& o);

}  // namespace hwt
