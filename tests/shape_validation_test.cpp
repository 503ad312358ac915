// The validation set of the GEMM model: step GEMMs of published configs, outside the sweep grid.
#include <gtest/gtest.h>

#include <set>

#include "analysis/gemm_sweep.h"
#include "analysis/gemm_validation.h"

namespace hwt {
namespace {

TEST(GemmValidation, StepGemmsOfPublishedConfigsOutsideTheSweep) {
  const std::vector<ValidationShape> v = validation_shapes();
  EXPECT_GE(v.size(), 150u);
  std::set<GemmShape> grid, seen;
  for (const SweepShape& s : sweep_grid()) grid.insert(s.shape);
  int misaligned = 0;
  for (const ValidationShape& s : v) {
    EXPECT_FALSE(grid.count(s.shape)) << shape_label(s.shape);
    EXPECT_TRUE(seen.insert(s.shape).second) << shape_label(s.shape);
    misaligned += worst_alignment_bytes(s.shape, 2) < 16;
  }
  EXPECT_GE(misaligned, 20);
}

}  // namespace
}  // namespace hwt
