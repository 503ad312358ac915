// CpuBackend: token/position embeddings and sequence pooling.
#include <algorithm>

#include "backend/cpu/cpu_backend.h"

namespace hwt {

void CpuBackend::embedding_forward(const EmbeddingFwd& a) {
  expect_i32(a.ids, "ids");
  expect_f32(a.table, "table");
  const int64_t rows = a.out.rows(), h = a.out.cols(), vocab = a.table.dim(0);
  const int32_t* ids = a.ids.as<int32_t>();
  const float* table = a.table.as<float>();
  const float* pos = a.pos.defined() ? a.pos.as<float>() : nullptr;
  float* out = a.out.as<float>();
  for (int64_t r = 0; r < rows; ++r)
    if (ids[r] < 0 || ids[r] >= vocab)
      fail("token id {} outside the vocabulary of {}", ids[r], vocab);
  const int32_t* positions = nullptr;
  if (a.positions.defined()) {
    expect_i32(a.positions, "embedding positions");
    HWT_CHECK(pos && a.positions.numel() == rows, "embedding positions {} for {} rows",
              a.positions.str(), rows);
    positions = a.positions.as<int32_t>();
    for (int64_t r = 0; r < rows; ++r)
      HWT_CHECK(positions[r] >= 0 && positions[r] < a.pos.rows(),
                "embedding position {} outside the table of {}", positions[r], a.pos.rows());
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* t = table + ids[r] * h;
    float* o = out + r * h;
    if (pos) {
      const float* p = pos + (positions ? positions[r] : r % a.seq) * h;
      for (int64_t j = 0; j < h; ++j) o[j] = t[j] + p[j];
    } else {
      std::copy(t, t + h, o);
    }
  }
}

void CpuBackend::embedding_backward(const EmbeddingBwd& a) {
  expect_i32(a.ids, "ids");
  expect_f32(a.d_out, "d_out");
  const int64_t rows = a.d_out.rows(), h = a.d_out.cols();
  const int32_t* ids = a.ids.as<int32_t>();
  const float* dout = a.d_out.as<float>();
  float* dtable = a.d_table.as<float>();
  float* dpos = a.d_pos.defined() ? a.d_pos.as<float>() : nullptr;
  // Each thread owns a block of columns and walks the rows in order: no races, and the
  // summation order never depends on the thread count.
  constexpr int64_t kCols = 16;
#pragma omp parallel for schedule(static)
  for (int64_t c0 = 0; c0 < h; c0 += kCols) {
    const int64_t c1 = std::min(h, c0 + kCols);
    for (int64_t r = 0; r < rows; ++r) {
      const float* g = dout + r * h;
      float* t = dtable + ids[r] * h;
      for (int64_t j = c0; j < c1; ++j) t[j] += g[j];
      if (dpos) {
        float* p = dpos + (r % a.seq) * h;
        for (int64_t j = c0; j < c1; ++j) p[j] += g[j];
      }
    }
  }
}

void CpuBackend::pool_forward(const PoolFwd& a) {
  expect_f32(a.x, "x");
  const int64_t batch = a.out.rows(), h = a.out.cols();
  const float* x = a.x.as<float>();
  float* out = a.out.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    const float* rows = x + b * a.seq * h;
    float* o = out + b * h;
    if (a.mode == Pooling::First) {
      std::copy(rows, rows + h, o);
      continue;
    }
    const int64_t len = std::clamp<int64_t>(a.lengths.as<int32_t>()[b], 1, a.seq);
    std::fill(o, o + h, 0.0f);
    for (int64_t t = 0; t < len; ++t)
      for (int64_t j = 0; j < h; ++j) o[j] += rows[t * h + j];
    for (int64_t j = 0; j < h; ++j) o[j] /= static_cast<float>(len);
  }
}

void CpuBackend::pool_backward(const PoolBwd& a) {
  expect_f32(a.d_out, "d_out");
  const int64_t batch = a.d_out.rows(), h = a.d_out.cols();
  const float* dout = a.d_out.as<float>();
  float* dx = a.d_x.as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    const float* g = dout + b * h;
    float* rows = dx + b * a.seq * h;
    const int64_t len =
        a.mode == Pooling::First ? 1 : std::clamp<int64_t>(a.lengths.as<int32_t>()[b], 1, a.seq);
    const float w = 1.0f / static_cast<float>(len);
    for (int64_t t = 0; t < len; ++t)
      for (int64_t j = 0; j < h; ++j) rows[t * h + j] += g[j] * w;
  }
}

}  // namespace hwt
