#include "interop/tensor_layout.h"

#include <algorithm>
#include <cstring>

#include "core/bf16.h"
#include "core/error.h"
#include "core/fp16.h"

namespace hwt {
namespace {

// Rows and row width of a tensor seen as a matrix (a vector is rows of one element).
int64_t rows_of(const std::vector<int64_t>& s) {
  return s.empty() ? 1 : s[0];
}
int64_t width_of(const std::vector<int64_t>& s) {
  return element_count(s) / std::max<int64_t>(rows_of(s), 1);
}

// Where row r of hwt's q|k|v rows lies in GPT-NeoX's per-head (q, k, v) order.
int64_t interleaved_row(int64_t r, int64_t rows, int64_t heads) {
  const int64_t head_dim = rows / (3 * heads), part = r / (rows / 3),
                head = r % (rows / 3) / head_dim;
  return (head * 3 + part) * head_dim + r % head_dim;
}

}  // namespace

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t hwt_elements(const TensorLink& link) {
  if (link.layout != HfLayout::Stacked) return element_count(link.hf.at(0).shape);
  int64_t n = 0;
  for (const HfTensor& t : link.hf) n += element_count(t.shape);
  return n;
}

std::vector<float> to_f32(const SafetensorsFile::View& v) {
  const size_t n = v.bytes / dtype_size(v.dtype);
  std::vector<float> out(n);
  switch (v.dtype) {
    case DType::F32:
      std::memcpy(out.data(), v.data, v.bytes);
      break;
    case DType::BF16:
      for (size_t i = 0; i < n; ++i)
        out[i] = bf16_to_float(static_cast<const uint16_t*>(v.data)[i]);
      break;
    case DType::F16:
      for (size_t i = 0; i < n; ++i) out[i] = f16_to_float(static_cast<const uint16_t*>(v.data)[i]);
      break;
    case DType::I32:
      HWT_CHECK(false, "integer tensor given as weights");
  }
  return out;
}

std::vector<float> hwt_from_hf(const TensorLink& link, std::vector<std::vector<float>> parts,
                               const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<float>& first = parts.at(0);
  switch (link.layout) {
    case HfLayout::Same:
      return std::move(first);
    case HfLayout::Transposed: {
      const int64_t in = shapes[0][0], out = shapes[0][1];
      std::vector<float> t(first.size());
      for (int64_t i = 0; i < in; ++i)
        for (int64_t o = 0; o < out; ++o) t[size_t(o * in + i)] = first[size_t(i * out + o)];
      return t;
    }
    case HfLayout::Stacked: {
      std::vector<float> t;
      for (const std::vector<float>& p : parts) t.insert(t.end(), p.begin(), p.end());
      return t;
    }
    case HfLayout::HeadsInterleaved: {
      const int64_t rows = rows_of(shapes[0]), width = width_of(shapes[0]);
      std::vector<float> t(first.size());
      for (int64_t r = 0; r < rows; ++r)
        std::copy_n(first.begin() + interleaved_row(r, rows, link.heads) * width, width,
                    t.begin() + r * width);
      return t;
    }
    case HfLayout::PlusFirstRow: {
      const int64_t width = width_of(shapes[0]);
      for (size_t i = 0; i < first.size(); ++i) first[i] += parts[1][i % size_t(width)];
      return std::move(first);
    }
  }
  return {};
}

std::vector<float> hf_from_hwt(const TensorLink& link, size_t part, const float* hwt,
                               const std::vector<std::vector<int64_t>>& shapes) {
  const std::vector<int64_t>& shape = shapes.at(part);
  const int64_t n = element_count(shape);
  std::vector<float> t(size_t(n), 0.0f);
  switch (link.layout) {
    case HfLayout::Same:
      std::copy_n(hwt, n, t.begin());
      break;
    case HfLayout::Transposed: {
      const int64_t in = shape[0], out = shape[1];
      for (int64_t i = 0; i < in; ++i)
        for (int64_t o = 0; o < out; ++o) t[size_t(i * out + o)] = hwt[o * in + i];
      break;
    }
    case HfLayout::Stacked: {
      int64_t at = 0;
      for (size_t p = 0; p < part; ++p) at += element_count(shapes[p]);
      std::copy_n(hwt + at, n, t.begin());
      break;
    }
    case HfLayout::HeadsInterleaved: {
      const int64_t rows = rows_of(shape), width = width_of(shape);
      for (int64_t r = 0; r < rows; ++r)
        std::copy_n(hwt + r * width, width,
                    t.begin() + interleaved_row(r, rows, link.heads) * width);
      break;
    }
    case HfLayout::PlusFirstRow:  // the positions as hwt holds them; token types stay zero
      if (part == 0) std::copy_n(hwt, n, t.begin());
      break;
  }
  return t;
}

}  // namespace hwt
