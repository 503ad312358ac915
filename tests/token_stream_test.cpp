#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "data/token_stream.h"

namespace hwt {
namespace {

std::vector<int32_t> iota(int32_t first, size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// 0..99 held as parts of 10, 0 (skipped), 1, 39 and 50 ids.
TokenStream in_parts() {
  return TokenStream(
      std::vector<std::vector<int32_t>>{iota(0, 10), {}, iota(10, 1), iota(11, 39), iota(50, 50)});
}

TEST(TokenStream, PartsReadAsOneStream) {
  const TokenStream s = in_parts();
  ASSERT_EQ(s.size(), 100u);
  EXPECT_EQ(s.to_vector(), iota(0, 100));
  // Every window, across any number of parts.
  for (int64_t first = 0; first <= 100; first += 3)
    for (int64_t count = 0; first + count <= 100; count += 7) {
      std::vector<int32_t> got(static_cast<size_t>(count));
      s.read(first, count, got.data());
      ASSERT_EQ(got, iota(static_cast<int32_t>(first), static_cast<size_t>(count)))
          << first << " + " << count;
    }
  int32_t one = -1;
  EXPECT_THROW(s.read(100, 1, &one), Error);
}

TEST(TokenStream, SlicesOfPartsKeepTheirIds) {
  const TokenStream s = in_parts();
  for (int32_t first : {0, 5, 10, 11, 49, 50, 99}) {
    for (size_t count : {0u, 1u, 2u, 40u}) {
      if (static_cast<size_t>(first) + count > 100) continue;
      const TokenStream sub = s.slice(static_cast<size_t>(first), count);
      ASSERT_EQ(sub.to_vector(), iota(first, count)) << first << " + " << count;
      if (count >= 2) {  // a slice of a slice
        EXPECT_EQ(sub.slice(1, count - 1).to_vector(), iota(first + 1, count - 1));
      }
    }
  }
  EXPECT_THROW(s.slice(90, 11), Error);
}

TEST(TokenStream, MappedIdsOfTwoBytesWiden) {
  auto held = std::make_shared<std::vector<uint16_t>>(std::vector<uint16_t>{7, 65535, 0, 42});
  const TokenStream s(held, held->data(), 2, held->size());
  EXPECT_EQ(s.to_vector(), (std::vector<int32_t>{7, 65535, 0, 42}));
  EXPECT_EQ(s.slice(1, 2).to_vector(), (std::vector<int32_t>{65535, 0}));
  EXPECT_EQ(s, TokenStream(std::vector<int32_t>{7, 65535, 0, 42}));
  EXPECT_TRUE(TokenStream(std::vector<std::vector<int32_t>>{{}, {}}).empty());
}

}  // namespace
}  // namespace hwt
