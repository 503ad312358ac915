// CpuBackend: rotary position embeddings on q and k, and their backward.
#include "backend/cpu/cpu_backend.h"

namespace hwt {
namespace {

// Turns the q and k heads of every row by +angle (sign 1) or -angle (sign -1).
void rotate(const Rope& a, float sign) {
  expect_f32(a.qkv, "rope qkv");
  expect_f32(a.cos, "rope cos");
  expect_f32(a.sin, "rope sin");
  const int64_t kv = a.kv(), D = a.head_dim, half = a.rotary_dim / 2;
  HWT_CHECK(a.rotary_dim % 2 == 0 && a.rotary_dim <= D, "rope rotary_dim {} for head_dim {}",
            a.rotary_dim, D);
  HWT_CHECK(a.qkv.cols() == (a.heads + 2 * kv) * D && a.qkv.rows() % a.seq == 0,
            "rope qkv {} for seq={} heads={} kv_heads={} head_dim={}", a.qkv.str(), a.seq, a.heads,
            kv, D);
  HWT_CHECK(a.cos.cols() == half && a.cos.rows() >= a.seq && a.sin.numel() == a.cos.numel(),
            "rope tables {} for seq {} and rotary_dim {}", a.cos.str(), a.seq, a.rotary_dim);
  const int64_t rows = a.qkv.rows(), width = a.qkv.cols(), rotated_heads = a.heads + kv;
  const float *cos = a.cos.as<float>(), *sin = a.sin.as<float>();
  float* qkv = a.qkv.as<float>();
  const int32_t* positions = nullptr;
  if (a.positions.defined()) {
    expect_i32(a.positions, "rope positions");
    HWT_CHECK(a.positions.numel() == rows, "rope positions {} for {} rows", a.positions.str(),
              rows);
    positions = a.positions.as<int32_t>();
    for (int64_t r = 0; r < rows; ++r)
      HWT_CHECK(positions[r] >= 0 && positions[r] < a.cos.rows(),
                "rope position {} outside the table of {}", positions[r], a.cos.rows());
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t p = positions ? positions[r] : r % a.seq;
    const float *c = cos + p * half, *s = sin + p * half;
    for (int64_t h = 0; h < rotated_heads; ++h) {  // q heads, then k heads
      float* x = qkv + r * width + h * D;
      for (int64_t i = 0; i < half; ++i) {
        const float x1 = x[i], x2 = x[i + half], si = sign * s[i];
        x[i] = x1 * c[i] - x2 * si;
        x[i + half] = x2 * c[i] + x1 * si;
      }
    }
  }
}

}  // namespace

void CpuBackend::rope_forward(const Rope& a) {
  rotate(a, 1.0f);
}

void CpuBackend::rope_backward(const Rope& a) {
  rotate(a, -1.0f);
}

}  // namespace hwt
