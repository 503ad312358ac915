// CudaBackend: linear layers and matmul through cuBLASLt. Row-major operands are handed to the
// column-major library transposed (row_major below): row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
#include <fmt/format.h>

#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {

using cuda::Epilogue;
using cuda::GemmDesc;

namespace {

bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Row-major C[M,N] = op(A)[M,K] · op(B)[K,N] as the column-major GEMM Cᵀ = op(B)ᵀ · op(A)ᵀ.
// A is stored [M,K] ([K,M] when trans_a) with rows of lda elements; likewise B; C has rows of ldc.
GemmDesc row_major(const void* a, bool trans_a, int64_t lda, const void* b, bool trans_b,
                   int64_t ldb, void* c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                   DType ab_type, DType c_type) {
  GemmDesc g;
  g.trans_a = trans_b;
  g.trans_b = trans_a;
  g.m = n;
  g.n = m;
  g.k = k;
  g.a = b;
  g.lda = ldb;
  g.b = a;
  g.ldb = lda;
  g.d = c;
  g.ldd = ldc;
  g.ab_type = ab_type;
  g.d_type = c_type;
  return g;
}

// y[M,N] = x[M,K] · w[N,K]ᵀ into `out`.
GemmDesc forward_desc(const LinearFwd& a, int64_t m, int64_t k, int64_t n, void* out) {
  return row_major(a.x.data, false, k, a.w.data, true, k, out, n, m, n, k, a.x.dtype, a.y.dtype);
}

}  // namespace

bool CudaBackend::gemm(const GemmDesc& g) {
  if (capturing_ && gemm_->would_tune(g))
    outside_capture(fmt::format("autotuning a new GEMM shape ({}x{}x{})", g.m, g.n, g.k));
  return gemm_->run(g, launch_.stream);
}

void CudaBackend::linear_forward(const LinearFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_dtype(a.w, a.x.dtype, "w");
  cuda::expect_dtype(a.y, a.x.dtype, "y");
  const int64_t m = a.x.rows(), k = a.x.cols(), n = a.w.dim(0);
  HWT_CHECK(a.w.cols() == k && a.y.rows() == m && a.y.cols() == n, "linear x{} w{} y{}",
            a.x.shape.str(), a.w.shape.str(), a.y.shape.str());
  const bool act = a.act != Activation::None;
  if (act) cuda::expect_same(a.pre_act, a.y, "pre_act");
  if (a.b.defined()) cuda::expect_dtype(a.b, a.x.dtype, "b");
  void* z = act ? a.pre_act.data : a.y.data;
  const bool bias_ok = a.b.defined() && aligned16(a.b.data);
  // bf16/f16 GPT-style MLP: the whole of bias + tanh-GELU in the GEMM epilogue.
  if (bias_ok && a.act == Activation::GeluTanh && a.x.dtype != DType::F32) {
    GemmDesc g = forward_desc(a, m, k, n, a.y.data);
    g.epilogue = Epilogue::GeluAuxBias;
    g.bias = a.b.data;
    g.aux = a.pre_act.data;
    if (gemm(g)) return cuda::check_launch("linear_forward");
  }
  GemmDesc g = forward_desc(a, m, k, n, z);
  bool bias_done = false;
  if (bias_ok) {
    g.epilogue = Epilogue::Bias;
    g.bias = a.b.data;
    bias_done = gemm(g);
  }
  if (!bias_done) {
    g.epilogue = Epilogue::None;
    g.bias = nullptr;
    gemm(g);
  }
  cuda::bias_act(launch_, a.y.dtype, z, bias_done || !a.b.defined() ? nullptr : a.b.data, a.y.data,
                 m, n, a.act);
  cuda::check_launch("linear_forward");
}

void CudaBackend::linear_backward(const LinearBwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_dtype(a.w, a.x.dtype, "w");
  cuda::expect_dtype(a.dy, a.x.dtype, "dy");
  cuda::expect_dtype(a.dw, DType::F32, "dw");
  const int64_t m = a.x.rows(), k = a.x.cols(), n = a.w.dim(0);
  HWT_CHECK(a.dy.rows() == m && a.dy.cols() == n && a.dw.numel() == n * k,
            "linear backward x{} w{} dy{} dw{}", a.x.shape.str(), a.w.shape.str(), a.dy.shape.str(),
            a.dw.shape.str());
  if (a.act != Activation::None) cuda::expect_same(a.pre_act, a.dy, "pre_act");
  float* db = nullptr;
  if (a.db.defined()) {
    cuda::expect_dtype(a.db, DType::F32, "db");
    HWT_CHECK(a.db.numel() == n, "db {} for {} outputs", a.db.str(), n);
    db = a.db.as<float>();
  }
  if (db || a.act != Activation::None) {
    float* part = db ? static_cast<float*>(scratch(cuda::bias_grad_scratch_bytes(m, n))) : nullptr;
    cuda::act_backward_bias_grad(launch_, a.dy.dtype, a.dy.data,
                                 a.act != Activation::None ? a.pre_act.data : nullptr, a.act, db, m,
                                 n, part);
  }
  if (a.dx.defined()) {
    cuda::expect_dtype(a.dx, a.x.dtype, "dx");
    // dx[M,K] = dy[M,N] · w[N,K]
    GemmDesc g = row_major(a.dy.data, false, n, a.w.data, false, k, a.dx.data, k, m, k, n,
                           a.x.dtype, a.dx.dtype);
    g.beta = a.accumulate_dx ? 1.0f : 0.0f;
    gemm(g);
  }
  // dw[N,K] += dy[M,N]ᵀ · x[M,K]
  GemmDesc g = row_major(a.dy.data, true, n, a.x.data, false, k, a.dw.data, k, n, k, m, a.x.dtype,
                         DType::F32);
  g.beta = 1.0f;
  gemm(g);
  cuda::check_launch("linear_backward");
}

void CudaBackend::matmul(const Matmul& a) {
  cuda::expect_float(a.a, "a");
  cuda::expect_dtype(a.b, a.a.dtype, "b");
  cuda::expect_dtype(a.c, a.a.dtype, "c");
  const int rank = a.a.shape.rank;
  HWT_CHECK((rank == 2 || rank == 3) && a.b.shape.rank == rank && a.c.shape.rank == rank,
            "matmul ranks a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  const int64_t batch = rank == 3 ? a.a.dim(0) : 1;
  HWT_CHECK(a.b.shape.rank == 2 || (a.b.dim(0) == batch && a.c.dim(0) == batch),
            "matmul batch a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  const int64_t ar = a.a.dim(-2), ac = a.a.dim(-1), br = a.b.dim(-2), bc = a.b.dim(-1);
  const int64_t m = a.trans_a ? ac : ar, k = a.trans_a ? ar : ac;
  const int64_t n = a.trans_b ? br : bc;
  HWT_CHECK((a.trans_b ? bc : br) == k && a.c.dim(-2) == m && a.c.dim(-1) == n,
            "matmul shapes a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  GemmDesc g = row_major(a.a.data, a.trans_a, ac, a.b.data, a.trans_b, bc, a.c.data, n, m, n, k,
                         a.a.dtype, a.c.dtype);
  g.alpha = a.alpha;
  g.beta = a.beta;
  g.batch = batch;
  g.stride_a = br * bc;
  g.stride_b = ar * ac;
  g.stride_d = m * n;
  gemm(g);
  cuda::check_launch("matmul");
}

}  // namespace hwt
