// The piece-by-piece conversions between Hugging Face tensors and hwt parameters
// (interop/tensor_layout.h) against each layout written from its definition, made whole and made
// in pieces that cut rows and parts anywhere (write_safetensors asks for 64 MB pieces; a large
// tensor is cut at arbitrary elements).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/bf16.h"
#include "core/fp16.h"
#include "interop/tensor_layout.h"

namespace hwt {
namespace {

struct HfPart {
  std::vector<int64_t> shape;
  std::vector<uint16_t> bf16;  // the values as the file holds them
  SafetensorsFile::View view() const {
    return {DType::BF16, shape, bf16.data(), bf16.size() * sizeof(uint16_t)};
  }
  float at(int64_t i) const { return bf16_to_float(bf16[static_cast<size_t>(i)]); }
};

HfPart random_part(std::vector<int64_t> shape, uint32_t seed) {
  HfPart p{std::move(shape), {}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  p.bf16.resize(static_cast<size_t>(element_count(p.shape)));
  for (uint16_t& v : p.bf16) v = float_to_bf16(d(rng));
  return p;
}

std::vector<SafetensorsFile::View> views(const std::vector<HfPart>& parts) {
  std::vector<SafetensorsFile::View> v;
  for (const HfPart& p : parts) v.push_back(p.view());
  return v;
}

// The hwt parameter made in pieces of `piece` elements.
std::vector<float> hwt_in_pieces(const TensorLink& link, const std::vector<HfPart>& parts,
                                 int64_t piece) {
  std::vector<float> out(static_cast<size_t>(hwt_elements(link)));
  const auto n = static_cast<int64_t>(out.size());
  for (int64_t at = 0; at < n; at += piece)
    hwt_piece_from_hf(link, views(parts), at, std::min(piece, n - at), out.data() + at);
  return out;
}

// Hugging Face tensor `part` made from the hwt values in pieces of `piece` elements, in fp32.
std::vector<float> hf_in_pieces(const TensorLink& link, size_t part, const std::vector<float>& hwt,
                                const std::vector<std::vector<int64_t>>& shapes, int64_t piece) {
  const int64_t n = element_count(shapes[part]);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t at = 0; at < n; at += piece)
    EXPECT_FALSE(hf_piece_from_hwt(link, part, hwt.data(), shapes, DType::F32, at,
                                   std::min(piece, n - at), out.data() + at));
  return out;
}

TensorLink link_of(HfLayout layout, const std::vector<HfPart>& parts, int64_t heads = 0) {
  TensorLink link{std::string("p"), layout, {}, heads};
  for (const HfPart& p : parts) link.hf.push_back({"hf", p.shape});
  return link;
}

std::vector<std::vector<int64_t>> shapes_of(const std::vector<HfPart>& parts) {
  std::vector<std::vector<int64_t>> s;
  for (const HfPart& p : parts) s.push_back(p.shape);
  return s;
}

// Each layout, whole and cut into pieces of 1, 7 and 61 elements (cutting rows and parts).
void expect_layout(const TensorLink& link, const std::vector<HfPart>& parts,
                   const std::vector<float>& expected) {
  for (const int64_t piece : {int64_t{1}, int64_t{7}, int64_t{61}, hwt_elements(link)}) {
    SCOPED_TRACE(piece);
    EXPECT_EQ(hwt_in_pieces(link, parts, piece), expected);  // exact: bf16 -> fp32 is exact
  }
}

TEST(InteropLayout, StackedPartsFollowOneAnother) {
  const std::vector<HfPart> parts = {random_part({6, 5}, 1), random_part({2, 5}, 2),
                                     random_part({2, 5}, 3)};
  std::vector<float> expected;
  for (const HfPart& p : parts)
    for (int64_t i = 0; i < element_count(p.shape); ++i) expected.push_back(p.at(i));
  const TensorLink link = link_of(HfLayout::Stacked, parts);
  expect_layout(link, parts, expected);
  for (size_t k = 0; k < parts.size(); ++k)
    for (const int64_t piece : {int64_t{3}, int64_t{64}}) {
      const std::vector<float> back = hf_in_pieces(link, k, expected, shapes_of(parts), piece);
      for (int64_t i = 0; i < element_count(parts[k].shape); ++i)
        ASSERT_EQ(back[static_cast<size_t>(i)], parts[k].at(i)) << k << " " << i;
    }
}

TEST(InteropLayout, Conv1DWeightsAreTransposed) {
  const std::vector<HfPart> parts = {random_part({7, 3}, 4)};  // [in, out]
  std::vector<float> expected(21);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t o = 0; o < 3; ++o)
      expected[static_cast<size_t>(o * 7 + i)] = parts[0].at(i * 3 + o);
  const TensorLink link = link_of(HfLayout::Transposed, parts);
  expect_layout(link, parts, expected);
  const std::vector<float> back = hf_in_pieces(link, 0, expected, shapes_of(parts), 4);
  for (int64_t i = 0; i < 21; ++i) EXPECT_EQ(back[static_cast<size_t>(i)], parts[0].at(i));
}

TEST(InteropLayout, NeoxHeadsAreDeinterleaved) {
  const int64_t heads = 2, head_dim = 3, width = 4;
  const std::vector<HfPart> parts = {random_part({3 * heads * head_dim, width}, 5)};
  // NeoX's rows: head 0's q, k, v, then head 1's; hwt's: every head's q, then k, then v.
  std::vector<float> expected;
  for (int64_t part = 0; part < 3; ++part)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < head_dim; ++d)
        for (int64_t c = 0; c < width; ++c)
          expected.push_back(parts[0].at(((h * 3 + part) * head_dim + d) * width + c));
  const TensorLink link = link_of(HfLayout::HeadsInterleaved, parts, heads);
  expect_layout(link, parts, expected);
  const std::vector<float> back = hf_in_pieces(link, 0, expected, shapes_of(parts), 5);
  for (int64_t i = 0; i < element_count(parts[0].shape); ++i)
    EXPECT_EQ(back[static_cast<size_t>(i)], parts[0].at(i)) << i;
}

TEST(InteropLayout, BertPositionsAddTheFirstTokenTypeRow) {
  const std::vector<HfPart> parts = {random_part({5, 4}, 6), random_part({2, 4}, 7)};
  std::vector<float> expected;
  for (int64_t i = 0; i < 20; ++i) expected.push_back(parts[0].at(i) + parts[1].at(i % 4));
  const TensorLink link = link_of(HfLayout::PlusFirstRow, parts);
  expect_layout(link, parts, expected);
  // Back out: the sums as positions, and token type rows of zeros.
  EXPECT_EQ(hf_in_pieces(link, 0, expected, shapes_of(parts), 3), expected);
  EXPECT_EQ(hf_in_pieces(link, 1, expected, shapes_of(parts), 3), std::vector<float>(8, 0.0f));
}

TEST(InteropLayout, SixteenBitPiecesRoundEachValueAndFindFp16Overflow) {
  const std::vector<HfPart> parts = {random_part({4, 5}, 8)};
  const TensorLink link = link_of(HfLayout::Same, parts);
  std::vector<float> hwt(20);
  for (size_t i = 0; i < hwt.size(); ++i) hwt[i] = 0.1f * static_cast<float>(i) - 0.7f;
  std::vector<uint16_t> half(20);
  for (int64_t at = 0; at < 20; at += 6) {
    const int64_t n = std::min<int64_t>(6, 20 - at);
    EXPECT_FALSE(hf_piece_from_hwt(link, 0, hwt.data(), shapes_of(parts), DType::BF16, at, n,
                                   half.data() + at));
  }
  for (size_t i = 0; i < hwt.size(); ++i) EXPECT_EQ(half[i], float_to_bf16(hwt[i])) << i;
  for (int64_t at = 0; at < 20; at += 6) {
    const int64_t n = std::min<int64_t>(6, 20 - at);
    EXPECT_FALSE(hf_piece_from_hwt(link, 0, hwt.data(), shapes_of(parts), DType::F16, at, n,
                                   half.data() + at));
  }
  for (size_t i = 0; i < hwt.size(); ++i) EXPECT_EQ(half[i], float_to_f16(hwt[i])) << i;
  // 65520 rounds up to infinity in fp16 (the first value that does); 65504 is the largest.
  hwt[13] = 65504.0f;
  hwt[17] = -65520.0f;
  const std::optional<float> bad =
      hf_piece_from_hwt(link, 0, hwt.data(), shapes_of(parts), DType::F16, 0, 20, half.data());
  ASSERT_TRUE(bad);
  EXPECT_EQ(*bad, -65520.0f);
}

}  // namespace
}  // namespace hwt
