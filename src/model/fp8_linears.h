// Which linear layers of a model run their products in fp8 (train.precision = "fp8"), each with
// its delayed-scaling state and the workspace its casts land in: what a Linear looks up by its
// weight when the step's context carries a table. The trainer fills it (train/fp8_training.h).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "backend/ops.h"
#include "model/param_store.h"

namespace hwt {

class Fp8Linears {
 public:
  void set(ParamStore::Handle weight, const Fp8Linear& f) { by_weight_[weight] = f; }
  // The layer's fp8 form for a step of `rows` rows: none (every product in bf16) where the layer
  // is not in the table, or where rows is not a multiple of 16 (a short last batch), which fp8
  // GEMMs cannot take. A forward run again (train.recompute) casts the same values at the same
  // scales: its casts tally nothing, so a step's figures count each tensor once.
  Fp8Linear find(ParamStore::Handle weight, int64_t rows, bool recompute) const {
    if (rows % 16 != 0) return {};
    const auto it = by_weight_.find(weight);
    if (it == by_weight_.end()) return {};
    Fp8Linear f = it->second;
    if (recompute)
      for (Fp8Scaled* s : {&f.x, &f.w, &f.dy}) s->amax = s->counts = Tensor{};
    return f;
  }

 private:
  std::unordered_map<ParamStore::Handle, Fp8Linear> by_weight_;
};

}  // namespace hwt
