#include <gtest/gtest.h>

#include "core/tensor.h"

namespace hwt {

TEST(Tensor, ViewsShareMemoryAndCheckSizes) {
  float buf[12];
  Tensor t{buf, Shape{3, 4}, DType::F32, Device::Cpu};
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cols(), 4);
  EXPECT_EQ(t.bytes(), 48u);
  Tensor r = t.row_slice(1, 2);
  EXPECT_EQ(r.data, buf + 4);
  EXPECT_EQ(r.shape, (Shape{2, 4}));
  EXPECT_EQ(t.flat_slice(5, 3).data, buf + 5);
  EXPECT_THROW(t.view(Shape{5, 2}), Error);
  EXPECT_THROW(t.row_slice(2, 2), Error);
  EXPECT_EQ(t.str(), "f32[3, 4]");
}

}  // namespace hwt
