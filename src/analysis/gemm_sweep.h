// The grid of GEMM shapes `hwt shape --sweep` measures to fit the model: transformer layer
// GEMMs over a range of widths, misaligned widths, vocabularies, batched attention, SwiGLU-style
// FFN widths, wave-boundary and small memory-bound shapes. Alternate shapes of each family are
// held out of the fit so the reported accuracy is on shapes the fit did not see.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"

namespace hwt {

struct SweepShape {
  std::string family;
  GemmShape shape;
  bool held_out = false;
};

std::vector<SweepShape> sweep_grid();

}  // namespace hwt
