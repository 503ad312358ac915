// Helpers for op tests: tensors from host vectors on any backend, random data, error norms and
// central finite differences in double precision.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/philox.h"

namespace hwt::test {

// The 64-bit zero counter prune_small adds to (two I32 words on the device).
inline uint64_t read_counter(Backend& be, const Tensor& zeros) {
  uint64_t v = 0;
  be.download(&v, zeros);
  return v;
}

// Normal(0, scale) draws; distinct seeds give independent data. Never zeros.
inline std::vector<float> randn(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // In (0, 1]: the largest draw, 1 - 2^-24, plus the offset must not pass 1 (log > 0, NaN).
    const double u1 = std::min(philox_uniform(seed, static_cast<uint64_t>(2 * i)) + 1e-7, 1.0);
    const double u2 = philox_uniform(seed, static_cast<uint64_t>(2 * i + 1));
    v[static_cast<size_t>(i)] =
        static_cast<float>(scale * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  return v;
}

// Cosines and sines of rotary angles position * 10000^(-2i / rotary_dim), [rows, rotary_dim/2].
inline std::pair<std::vector<float>, std::vector<float>> rope_tables(int64_t rows,
                                                                     int64_t rotary_dim) {
  const int64_t half = rotary_dim / 2;
  std::vector<float> cosv(static_cast<size_t>(rows * half)), sinv(cosv.size());
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * i / rotary_dim);
      cosv[static_cast<size_t>(p * half + i)] = static_cast<float>(std::cos(angle));
      sinv[static_cast<size_t>(p * half + i)] = static_cast<float>(std::sin(angle));
    }
  return {cosv, sinv};
}

inline std::vector<double> to_double(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// Where a vector holds NaNs (count, first and last index), for a failing comparison's log: a
// poisoned output that was never written shows up as a block of NaNs.
template <class V>
void report_nans(const char* which, const V& v) {
  size_t count = 0, first = 0, last = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (std::isnan(static_cast<double>(v[i]))) {
      if (count++ == 0) first = i;
      last = i;
    }
  if (count > 0)
    std::fprintf(stderr, "rel_err: %s argument has %zu NaN of %zu (indices %zu..%zu)\n", which,
                 count, v.size(), first, last);
}

// ||a - b|| / max(||b||, tiny).
template <class A, class B>
double rel_err(const A& a, const B& b) {
  double num = 0, den = 0;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  if (std::isnan(num)) {
    report_nans("first", a);
    report_nans("second", b);
    return INFINITY;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

// d loss / d x by central differences in double precision.
inline std::vector<double> numeric_grad(
    const std::function<double(const std::vector<double>&)>& loss, std::vector<double> x,
    double h = 1e-5) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = loss(x);
    x[i] = keep - h;
    const double down = loss(x);
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

inline double dot(const std::vector<double>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Tensors on a backend, released with the pool. Outputs are poisoned (NaN) when made, so an
// op that skips an element fails its comparison.
class TensorPool {
 public:
  explicit TensorPool(Backend& be) : be_(be) {}
  Tensor f32(Shape s, const std::vector<float>& host) {
    Tensor t = alloc(DType::F32, s);
    EXPECT_EQ(static_cast<int64_t>(host.size()), s.numel());
    be_.upload(t, host.data());
    return t;
  }
  Tensor i32(Shape s, const std::vector<int32_t>& host) {
    Tensor t = alloc(DType::I32, s);
    be_.upload(t, host.data());
    return t;
  }
  Tensor poisoned(Shape s) {
    Tensor t = alloc(DType::F32, s);
    be_.fill({t, NAN});
    return t;
  }
  Tensor zeros(Shape s) {
    Tensor t = alloc(DType::F32, s);
    be_.fill({t, 0.0f});
    return t;
  }
  std::vector<float> read(Tensor t) {
    std::vector<float> v(static_cast<size_t>(t.numel()));
    be_.download(v.data(), t);
    return v;
  }
  std::vector<int32_t> read_i32(Tensor t) {
    std::vector<int32_t> v(static_cast<size_t>(t.numel()));
    be_.download(v.data(), t);
    return v;
  }
  Backend& backend() { return be_; }

 private:
  Tensor alloc(DType dt, Shape s) {
    bufs_.emplace_back(be_, static_cast<size_t>(s.numel()) * dtype_size(dt));
    return bufs_.back().tensor(dt, s);
  }
  Backend& be_;
  std::vector<DeviceBuffer> bufs_;
};

}  // namespace hwt::test
