#include "interop/tensor_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

// The hwt row that GPT-NeoX's row `row` holds: the inverse of interleaved_row.
int64_t deinterleaved_row(int64_t row, int64_t rows, int64_t heads) {
  const int64_t head_dim = rows / (3 * heads), block = row / head_dim;
  return block % 3 * (rows / 3) + block / 3 * head_dim + row % head_dim;
}

// Pieces below this many elements stay on one thread (a team costs more than they do).
constexpr int64_t kParallelElements = int64_t{1} << 16;

// f(k) for k in [0, n), spread over the cores.
template <class F>
void for_each_element(int64_t n, F f) {
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (int64_t k = 0; k < n; ++k) f(k);
}

float load(const SafetensorsFile::View& v, int64_t i) {
  switch (v.dtype) {
    case DType::BF16:
      return bf16_to_float(static_cast<const uint16_t*>(v.data)[i]);
    case DType::F16:
      return f16_to_float(static_cast<const uint16_t*>(v.data)[i]);
    default:
      return static_cast<const float*>(v.data)[i];
  }
}

// n elements of v from element `from`, as fp32 (a loop per dtype: the common case, kept tight).
void convert_run(const SafetensorsFile::View& v, int64_t from, int64_t n, float* dst) {
  const auto* half = static_cast<const uint16_t*>(v.data) + from;
  switch (v.dtype) {
    case DType::BF16:
      for_each_element(n, [&](int64_t k) { dst[k] = bf16_to_float(half[k]); });
      break;
    case DType::F16:
      for_each_element(n, [&](int64_t k) { dst[k] = f16_to_float(half[k]); });
      break;
    default: {
      const float* f = static_cast<const float*>(v.data) + from;
      for_each_element(n, [&](int64_t k) { dst[k] = f[k]; });
    }
  }
}

// dst[k] = value(k) for k in [0, n), in `dtype`; the first value past fp16's range, if any.
template <class Value>
std::optional<float> store_run(DType dtype, int64_t n, Value value, void* dst) {
  switch (dtype) {
    case DType::BF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for_each_element(n, [&](int64_t k) { d[k] = float_to_bf16(value(k)); });
      return std::nullopt;
    }
    case DType::F16: {
      auto* d = static_cast<uint16_t*>(dst);
      int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad) if (n >= kParallelElements)
      for (int64_t k = 0; k < n; ++k) {
        const float v = value(k);
        d[k] = float_to_f16(v);
        if ((d[k] & 0x7fffu) == 0x7c00u && std::isfinite(v)) bad = std::min(bad, k);
      }
      if (bad < n) return value(bad);
      return std::nullopt;
    }
    default: {
      auto* d = static_cast<float*>(dst);
      for_each_element(n, [&](int64_t k) { d[k] = value(k); });
      return std::nullopt;
    }
  }
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

void hwt_piece_from_hf(const TensorLink& link, const std::vector<SafetensorsFile::View>& parts,
                       int64_t first, int64_t count, float* dst) {
  for (const SafetensorsFile::View& v : parts)
    HWT_CHECK(v.dtype == DType::F32 || v.dtype == DType::BF16 || v.dtype == DType::F16,
              "{} tensor given as weights", dtype_name(v.dtype));
  const SafetensorsFile::View& a = parts.at(0);
  switch (link.layout) {
    case HfLayout::Same:
      return convert_run(a, first, count, dst);
    case HfLayout::Stacked: {
      int64_t at = 0;  // the part's first element in the hwt parameter
      for (const SafetensorsFile::View& v : parts) {
        const int64_t n = element_count(v.shape), lo = std::max(first, at),
                      hi = std::min(first + count, at + n);
        if (lo < hi) convert_run(v, lo - at, hi - lo, dst + (lo - first));
        at += n;
      }
      return;
    }
    case HfLayout::Transposed: {
      const int64_t in = a.shape[0], out = a.shape[1];
      return for_each_element(count, [&](int64_t k) {
        const int64_t e = first + k;
        dst[k] = load(a, e % in * out + e / in);
      });
    }
    case HfLayout::HeadsInterleaved: {
      const int64_t rows = rows_of(a.shape), width = width_of(a.shape);
      return for_each_element(count, [&](int64_t k) {
        const int64_t e = first + k;
        dst[k] = load(a, interleaved_row(e / width, rows, link.heads) * width + e % width);
      });
    }
    case HfLayout::PlusFirstRow: {
      const int64_t width = width_of(a.shape);
      const SafetensorsFile::View& b = parts.at(1);
      return for_each_element(count, [&](int64_t k) {
        const int64_t e = first + k;
        dst[k] = load(a, e) + load(b, e % width);
      });
    }
  }
}

std::optional<float> hf_piece_from_hwt(const TensorLink& link, size_t part, const float* hwt,
                                       const std::vector<std::vector<int64_t>>& shapes, DType dtype,
                                       int64_t first, int64_t count, void* dst) {
  HWT_CHECK(dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16, "export in {}",
            dtype_name(dtype));
  const std::vector<int64_t>& shape = shapes.at(part);
  switch (link.layout) {
    case HfLayout::Same:
      return store_run(
          dtype, count, [&](int64_t k) { return hwt[first + k]; }, dst);
    case HfLayout::Stacked: {
      int64_t at = first;
      for (size_t p = 0; p < part; ++p) at += element_count(shapes[p]);
      return store_run(
          dtype, count, [&](int64_t k) { return hwt[at + k]; }, dst);
    }
    case HfLayout::Transposed: {
      const int64_t in = shape[0], out = shape[1];
      return store_run(
          dtype, count,
          [&](int64_t k) {
            const int64_t e = first + k;
            return hwt[e % out * in + e / out];
          },
          dst);
    }
    case HfLayout::HeadsInterleaved: {
      const int64_t rows = rows_of(shape), width = width_of(shape);
      return store_run(
          dtype, count,
          [&](int64_t k) {
            const int64_t e = first + k;
            return hwt[deinterleaved_row(e / width, rows, link.heads) * width + e % width];
          },
          dst);
    }
    case HfLayout::PlusFirstRow:  // the positions as hwt holds them; token types stay zero
      return store_run(
          dtype, count, [&](int64_t k) { return part == 0 ? hwt[first + k] : 0.0f; }, dst);
  }
  return std::nullopt;
}

}  // namespace hwt
