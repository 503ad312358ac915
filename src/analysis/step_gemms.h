// The GEMMs of one traced step, grouped by where they come from and their shape, each with the
// storage layout the real kernels use (which decides which dimensions must be aligned).
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"
#include "workload/workload.h"

namespace hwt {

struct StepGemm {
  std::string scope;  // layer scope with the layer index as '*': "layers.*.mlp", "head.lm"
  std::string role;   // what it computes: "x.W^T", "dy.W", "dy^T.x", "Q.K^T", ...
  Phase phase = Phase::Forward;
  GemmShape shape;
  int64_t count = 0;  // occurrences in the step

  double flops() const { return shape.flops() * static_cast<double>(count); }
};

// In first-seen order. Linear layers: forward x.W^T (W stored out×in), input gradient dy.W,
// weight gradient dy^T.x; attention: the batched products of scores and context and their
// four backward products, over batch × heads.
std::vector<StepGemm> step_gemms(const Workload& w);

}  // namespace hwt
