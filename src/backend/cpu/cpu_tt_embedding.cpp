// CpuBackend: the tensor-train-matrix token table (model.tt.embedding), one row at a time.
#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/ttm_table.h"

namespace hwt {
namespace {

// The cores of one lookup: slice k is core k at the id's k-th vocabulary digit, [r_k, h_k, r_k+1].
struct Slices {
  const TtmTable& t;
  std::vector<const float*> core;  // core data
  std::vector<int64_t> digit;

  Slices(const TtmTable& table, const std::vector<Tensor>& cores) : t(table), digit(table.cores()) {
    for (const Tensor& g : cores) core.push_back(g.as<float>());
  }
  void select(int64_t id) {
    for (size_t k = 0; k < t.cores(); ++k) digit[k] = t.digit(id, k);
  }
  // Element [a, h, b] of slice k.
  float at(size_t k, int64_t a, int64_t h, int64_t b) const {
    return core[k][((a * t.vocab[k] + digit[k]) * t.hidden[k] + h) * t.ranks[k + 1] + b];
  }
};

// prefix[k] = slice 0 ··· slice k as [h_0…h_k, r_{k+1}], for k < upto.
void prefixes(const Slices& s, size_t upto, std::vector<std::vector<float>>& prefix) {
  const TtmTable& t = s.t;
  for (size_t k = 0; k < upto; ++k) {
    const int64_t before = t.hidden_before(k), rk = t.ranks[k], hk = t.hidden[k];
    const int64_t rn = t.ranks[k + 1];
    std::vector<float>& p = prefix[k];
    p.assign(static_cast<size_t>(before * hk * rn), 0.0f);
    for (int64_t i = 0; i < before; ++i)
      for (int64_t a = 0; a < rk; ++a) {
        const float left = k == 0 ? 1.0f : prefix[k - 1][i * rk + a];
        for (int64_t h = 0; h < hk; ++h)
          for (int64_t b = 0; b < rn; ++b) p[(i * hk + h) * rn + b] += left * s.at(k, a, h, b);
      }
  }
}

}  // namespace

void CpuBackend::tt_embedding_forward(const TtEmbeddingFwd& a) {
  expect_i32(a.ids, "ids");
  for (const Tensor& g : a.cores) expect_f32(g, "TTM core");
  const TtmTable t = ttm_table(a.cores);
  const int64_t rows = a.out.rows(), h = a.out.cols();
  HWT_CHECK(a.ids.numel() == rows && t.cols() == h, "TTM embedding ids {} out {} for {} columns",
            a.ids.str(), a.out.str(), t.cols());
  const int32_t* ids = a.ids.as<int32_t>();
  for (int64_t r = 0; r < rows; ++r)
    if (ids[r] < 0 || ids[r] >= t.rows())
      fail("token id {} outside the TTM table's {} rows", ids[r], t.rows());
  const float* pos = a.pos.defined() ? a.pos.as<float>() : nullptr;
  float* out = a.out.as<float>();
#pragma omp parallel
  {
    Slices s(t, a.cores);
    std::vector<std::vector<float>> prefix(t.cores());
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      s.select(ids[r]);
      prefixes(s, t.cores(), prefix);
      const std::vector<float>& row = prefix.back();
      float* o = out + r * h;
      for (int64_t j = 0; j < h; ++j) o[j] = row[j] + (pos ? pos[(r % a.seq) * h + j] : 0.0f);
    }
  }
}

void CpuBackend::tt_embedding_backward(const TtEmbeddingBwd& a) {
  expect_i32(a.ids, "ids");
  expect_f32(a.d_out, "d_out");
  const TtmTable t = ttm_table(a.cores);
  const size_t d = t.cores();
  HWT_CHECK(a.d_cores.size() == d, "{} core gradients for {} cores", a.d_cores.size(), d);
  const int64_t rows = a.d_out.rows(), h = a.d_out.cols();
  const int32_t* ids = a.ids.as<int32_t>();
  const float* dout = a.d_out.as<float>();
  // Each row's slice gradients, side by side, then summed into the cores in row order: the
  // result does not depend on the thread count.
  std::vector<int64_t> offset(d + 1, 0);
  for (size_t k = 0; k < d; ++k) offset[k + 1] = offset[k] + t.slice(k);
  std::vector<float> slices(static_cast<size_t>(rows * offset[d]));
#pragma omp parallel
  {
    Slices s(t, a.cores);
    std::vector<std::vector<float>> prefix(d), suffix(d + 1);
    std::vector<float> z;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      s.select(ids[r]);
      prefixes(s, d - 1, prefix);
      // suffix[k] = slice k ··· slice d-1 as [r_k, h_k…h_{d-1}]; suffix[d] = 1.
      suffix[d].assign(1, 1.0f);
      for (size_t k = d; k-- > 1;) {
        const int64_t rk = t.ranks[k], hk = t.hidden[k], rn = t.ranks[k + 1];
        const int64_t after = t.hidden_after(k);
        suffix[k].assign(static_cast<size_t>(rk * hk * after), 0.0f);
        for (int64_t x = 0; x < rk; ++x)
          for (int64_t y = 0; y < hk; ++y)
            for (int64_t b = 0; b < rn; ++b) {
              const float g = s.at(k, x, y, b);
              for (int64_t j = 0; j < after; ++j)
                suffix[k][(x * hk + y) * after + j] += g * suffix[k + 1][b * after + j];
            }
      }
      const float* g = dout + r * h;
      for (size_t k = 0; k < d; ++k) {
        // z[x, y, j] = Σ_i prefix[k-1][i, x] · g[i, y, j], then the slice gradient
        // [x, y, b] = Σ_j z[x, y, j] · suffix[k+1][b, j].
        const int64_t before = t.hidden_before(k), after = t.hidden_after(k);
        const int64_t rk = t.ranks[k], hk = t.hidden[k], rn = t.ranks[k + 1];
        z.assign(static_cast<size_t>(rk * hk * after), 0.0f);
        for (int64_t i = 0; i < before; ++i)
          for (int64_t x = 0; x < rk; ++x) {
            const float left = k == 0 ? 1.0f : prefix[k - 1][i * rk + x];
            for (int64_t y = 0; y < hk * after; ++y)
              z[x * hk * after + y] += left * g[i * hk * after + y];
          }
        float* ds = slices.data() + r * offset[d] + offset[k];
        for (int64_t xy = 0; xy < rk * hk; ++xy)
          for (int64_t b = 0; b < rn; ++b) {
            float sum = 0.0f;
            for (int64_t j = 0; j < after; ++j)
              sum += z[xy * after + j] * suffix[k + 1][b * after + j];
            ds[xy * rn + b] = sum;
          }
      }
    }
  }
  // Sum into the cores: each thread owns some (core, slice element) pairs and walks the rows.
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < offset[d]; ++e) {
    size_t k = 0;
    while (offset[k + 1] <= e) ++k;
    const int64_t local = e - offset[k], rn = t.ranks[k + 1], hk = t.hidden[k];
    const int64_t x = local / (hk * rn), y = (local / rn) % hk, b = local % rn;
    float* dcore = a.d_cores[k].as<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t v = t.digit(ids[r], k);
      dcore[((x * t.vocab[k] + v) * hk + y) * rn + b] += slices[r * offset[d] + e];
    }
  }
  if (a.d_pos.defined()) {
    float* dpos = a.d_pos.as<float>();
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t r = 0; r < rows; ++r) dpos[(r % a.seq) * h + j] += dout[r * h + j];
  }
}

}  // namespace hwt
