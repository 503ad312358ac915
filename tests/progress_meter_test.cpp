// The progress line of long commands: count, share, rate and time left.
#include <gtest/gtest.h>

#include "report/progress_meter.h"

namespace hwt {

TEST(ProgressMeter, LineHasCountShareRateAndTimeLeft) {
  EXPECT_EQ(ProgressMeter::line("sweep", "designs", 1200, 5000, 2.0),
            "sweep: 1200/5000 designs (24%), 600 designs/s, 6s left");
  EXPECT_EQ(ProgressMeter::line("merges", "", 300, 0, 1.0), "merges: 300, 300/s");
  EXPECT_EQ(ProgressMeter::line("compress", "layers", 5, 5, 90.0),
            "compress: 5/5 layers (100%), 0.0556 layers/s");
  EXPECT_EQ(ProgressMeter::line("import", "tensors", 1, 400, 3.0),
            "import: 1/400 tensors (0%), 0.333 tensors/s, 19m57s left");
  EXPECT_EQ(ProgressMeter::line("x", "y", 0, 10, 0.0), "x: 0/10 y (0%)");
}

}  // namespace hwt
