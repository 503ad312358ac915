// The validation set of the GEMM model: step GEMMs of published configs, outside the sweep grid.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

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
    EXPECT_FALSE(grid.count(s.gemm.shape)) << shape_label(s.gemm.shape);
    EXPECT_TRUE(seen.insert(s.gemm.shape).second) << shape_label(s.gemm.shape);
    misaligned += worst_alignment_bytes(s.gemm.shape, 2) < 16;
  }
  EXPECT_GE(misaligned, 20);
}

// The presets in configs/ give the validation set the GEMMs it had when each model was written
// in the code (recorded then, one "source m n k batch trans_a trans_b" line per shape).
TEST(GemmValidation, PresetsGiveTheRecordedShapes) {
  std::ifstream in(std::string(HWT_SOURCE_DIR) + "/tests/fixtures/golden/validation_shapes.txt");
  std::vector<std::string> recorded;
  for (std::string line; std::getline(in, line);) recorded.push_back(line);
  std::vector<std::string> now;
  for (const ValidationShape& s : validation_shapes()) {
    const GemmShape& g = s.gemm.shape;
    now.push_back(fmt::format("{} {} {} {} {} {} {}", s.source, g.m, g.n, g.k, g.batch,
                              int(g.trans_a), int(g.trans_b)));
  }
  EXPECT_EQ(now, recorded);
}

}  // namespace
}  // namespace hwt
