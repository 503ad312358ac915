// The GEMMs of one traced step, grouped by where they come from, what they compute and their
// shape (whose storage layout decides which dimensions must be aligned).
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"
#include "backend/trace/workload.h"

namespace hwt {

// One GEMM as the step runs it (shape, role, dtypes, fusions) and how often.
struct StepGemm : GemmCall {
  std::string scope;  // layer scope with the layer index as '*': "layers.*.mlp", "head.lm"
  Phase phase = Phase::Forward;
  int64_t count = 0;  // occurrences in the step

  double flops() const { return shape.flops() * static_cast<double>(count); }
};

// A layer scope with its layer index as '*': "layers.3.mlp" -> "layers.*.mlp"; others as given.
std::string generic_scope(const std::string& scope);

// In first-seen order, as the trace recorded them (backend/gemm.h).
std::vector<StepGemm> step_gemms(const Workload& w);

}  // namespace hwt
