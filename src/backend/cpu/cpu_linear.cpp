// CpuBackend: linear layers and matmul through OpenBLAS sgemm (row-major).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/vector_math.h"
#include "backend/fp8_linear.h"
#include "backend/fused_linear.h"
#include "backend/gemm.h"
#include "core/fp8.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

// An fp8 operand's values: its codes times its scale_inv.
std::vector<float> dequantize(const Tensor& t, const Tensor& scale_inv) {
  expect_f32(scale_inv, "fp8 scale_inv");
  const Fp8Format f = fp8_format(t.dtype);
  const float s = *scale_inv.as<float>();
  const uint8_t* codes = t.as<uint8_t>();
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = fp8_to_float(codes[i], f) * s;
  return v;
}

}  // namespace

void CpuBackend::linear_forward(const LinearFwd& a) {
  cast_forward_operands(*this, a);
  matmul(linear_forward_product(a));
}

// The reference is the composition itself.
void CpuBackend::fused_linear_forward(const FusedLinearFwd& a) {
  DeviceBuffer scratch(*this, fused_linear_scratch_bytes(a, Device::Cpu));
  compose_fused_linear(*this, a, scratch.data());
}

void CpuBackend::linear_backward(const LinearBwd& a) {
  expect_f32(a.x, "x");
  expect_f32(a.w, "w");
  expect_f32(a.dy, "dy");
  const int64_t m = a.x.rows(), n = a.w.dim(0);
  float* dy = a.dy.as<float>();
  const bool act = a.act != Activation::None, bias = a.db.defined();
  if (act) expect_f32(a.pre_act, "pre_act");
  if (bias) expect_f32(a.db, "db");
  // One pass over dy before the GEMMs: scaled by the activation's derivative, and summed by
  // column into db over fixed row chunks, combined in order (deterministic for any thread count).
  const int64_t chunks = ceil_div(m, kReduceChunk);
  std::vector<float> part(bias ? static_cast<size_t>(chunks * n) : 0, 0.0f);
  if (act || bias) {
    const float* z = act ? a.pre_act.as<float>() : nullptr;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      float* p = bias ? part.data() + c * n : nullptr;
      for (int64_t i = c * kReduceChunk; i < std::min(m, (c + 1) * kReduceChunk); ++i) {
        float* row = dy + i * n;
        if (act) vec::scale_by_activation_grad(a.act, z + i * n, row, n);
        if (bias)
          for (int64_t j = 0; j < n; ++j) p[j] += row[j];
      }
    }
  }
  if (a.dx.defined()) {
    cast_input_grad_operands(*this, a);
    matmul(linear_input_grad_product(a));
  }
  cast_weight_grad_operands(*this, a);
  matmul(linear_weight_grad_product(a));
  if (bias) {
    float* db = a.db.as<float>();
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = 0; j < n; ++j) db[j] += part[static_cast<size_t>(c * n + j)];
  }
}

void CpuBackend::matmul(const Matmul& a) {
  const GemmShape s = matmul_shape(a);
  if (is_fp8(a.a.dtype)) {
    // The reference of an fp8 GEMM: the operands' values, multiplied in fp32.
    std::vector<float> av = dequantize(a.a, a.a_scale_inv), bv = dequantize(a.b, a.b_scale_inv);
    Matmul m = a;
    m.a = Tensor{av.data(), a.a.shape, DType::F32};
    m.b = Tensor{bv.data(), a.b.shape, DType::F32};
    m.a_scale_inv = m.b_scale_inv = Tensor{};
    return matmul(m);
  }
  expect_f32(a.a, "a");
  expect_f32(a.b, "b");
  expect_f32(a.c, "c");
  const bool act = a.act != Activation::None;
  // The product lands in z (pre_act with an activation). A bias is added after the product, in
  // the activation's pass; when the product accumulates (beta != 0) it is laid into z first.
  const Tensor z = act ? a.pre_act : a.c;
  if (act) expect_f32(z, "pre_act");
  if (a.bias.defined()) expect_f32(a.bias, "bias");
  const float* bias = a.bias.defined() ? a.bias.as<float>() : nullptr;
  float beta = a.beta;
  const int64_t rows = s.batch * s.m;
  if (bias && beta != 0.0f) {
    float* zp = z.as<float>();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      float* row = zp + i * s.n;
      for (int64_t j = 0; j < s.n; ++j) row[j] = beta * row[j] + bias[j];
    }
    beta = 1.0f;
    bias = nullptr;
  }
  const int64_t stride_a = s.m * s.k, stride_b = s.k * s.n, stride_c = s.m * s.n;
  for (int64_t i = 0; i < s.batch; ++i)
    sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, a.alpha, a.a.as<float>() + i * stride_a, a.a.cols(),
          a.b.as<float>() + i * stride_b, a.b.cols(), beta, z.as<float>() + i * stride_c, s.n);
  if (act || bias) {
    float *zp = z.as<float>(), *y = a.c.as<float>();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < rows; ++i)
      vec::bias_activate(a.act, bias, zp + i * s.n, y + i * s.n, s.n);
  }
}

}  // namespace hwt
