// si_prefixed: the one formatter of counts and sizes for tables (hwt flops, memory, shape).
#include "report/si_prefix.h"

#include <gtest/gtest.h>

namespace hwt {
namespace {

TEST(SiPrefixed, CountsWithoutUnit) {
  EXPECT_EQ(si_prefixed(999), "999");
  EXPECT_EQ(si_prefixed(1000), "1K");
  EXPECT_EQ(si_prefixed(124439808), "124M");
  EXPECT_EQ(si_prefixed(2.5e15), "2.5P");
  EXPECT_EQ(si_prefixed(3e18), "3e+03P");  // no prefix past P
}

TEST(SiPrefixed, SizesWithUnit) {
  EXPECT_EQ(si_prefixed(512, 4, "B"), "512 B");
  EXPECT_EQ(si_prefixed(22.5e6, 4, "B"), "22.5 MB");
  EXPECT_EQ(si_prefixed(1234567, 4, "B"), "1.235 MB");
}

}  // namespace
}  // namespace hwt
