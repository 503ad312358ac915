#include "backend/gemm.h"

#include "backend/fp8_linear.h"
#include "core/error.h"

namespace hwt {
namespace {

Tensor as_matrix(const Tensor& t) {
  return t.view(Shape{t.rows(), t.cols()});
}

}  // namespace

std::string_view operand_name(Operand o) {
  switch (o) {
    case Operand::Activation:
      return "activation";
    case Operand::Weight:
      return "weight";
    case Operand::Gradient:
      return "gradient";
  }
  return "?";
}

std::string_view role_name(GemmRole r) {
  switch (r) {
    case GemmRole::LinearForward:
      return "linear_forward";
    case GemmRole::LinearInputGrad:
      return "linear_input_grad";
    case GemmRole::LinearWeightGrad:
      return "linear_weight_grad";
    case GemmRole::AttentionScores:
      return "attention_scores";
    case GemmRole::AttentionContext:
      return "attention_context";
    case GemmRole::AttentionValueGrad:
      return "attention_value_grad";
    case GemmRole::AttentionProbGrad:
      return "attention_prob_grad";
    case GemmRole::AttentionQueryGrad:
      return "attention_query_grad";
    case GemmRole::AttentionKeyGrad:
      return "attention_key_grad";
    case GemmRole::Matmul:
      return "matmul";
  }
  return "?";
}

std::string_view role_label(GemmRole r) {
  switch (r) {
    case GemmRole::LinearForward:
      return "x.W^T";
    case GemmRole::LinearInputGrad:
      return "dy.W";
    case GemmRole::LinearWeightGrad:
      return "dy^T.x";
    case GemmRole::AttentionScores:
      return "Q.K^T";
    case GemmRole::AttentionContext:
      return "P.V";
    case GemmRole::AttentionValueGrad:
      return "P^T.dO";
    case GemmRole::AttentionProbGrad:
      return "dO.V^T";
    case GemmRole::AttentionQueryGrad:
      return "dS.K";
    case GemmRole::AttentionKeyGrad:
      return "dS^T.Q";
    case GemmRole::Matmul:
      return "matmul";
  }
  return "?";
}

Operand operand_a(GemmRole r) {
  switch (r) {
    case GemmRole::LinearInputGrad:
    case GemmRole::LinearWeightGrad:
    case GemmRole::AttentionProbGrad:
    case GemmRole::AttentionQueryGrad:
    case GemmRole::AttentionKeyGrad:
      return Operand::Gradient;
    case GemmRole::LinearForward:
    case GemmRole::AttentionScores:
    case GemmRole::AttentionContext:
    case GemmRole::AttentionValueGrad:
    case GemmRole::Matmul:
      return Operand::Activation;
  }
  return Operand::Activation;
}

Operand operand_b(GemmRole r) {
  switch (r) {
    case GemmRole::LinearForward:
    case GemmRole::LinearInputGrad:
      return Operand::Weight;
    case GemmRole::AttentionValueGrad:
      return Operand::Gradient;
    case GemmRole::LinearWeightGrad:
    case GemmRole::AttentionScores:
    case GemmRole::AttentionContext:
    case GemmRole::AttentionProbGrad:
    case GemmRole::AttentionQueryGrad:
    case GemmRole::AttentionKeyGrad:
    case GemmRole::Matmul:
      return Operand::Activation;
  }
  return Operand::Activation;
}

bool before_softmax(GemmRole r) {
  return r == GemmRole::AttentionScores || r == GemmRole::AttentionValueGrad ||
         r == GemmRole::AttentionProbGrad;
}

GemmShape matmul_shape(const Matmul& a) {
  const int rank = a.a.shape.rank;
  HWT_CHECK((rank == 2 || rank == 3) && a.b.shape.rank == rank && a.c.shape.rank == rank,
            "matmul ranks a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  const int64_t batch = rank == 3 ? a.a.dim(0) : 1;
  HWT_CHECK(rank == 2 || (a.b.dim(0) == batch && a.c.dim(0) == batch), "matmul batch a{} b{} c{}",
            a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  GemmShape s;
  s.batch = batch;
  s.trans_a = a.trans_a;
  s.trans_b = a.trans_b;
  s.m = a.trans_a ? a.a.dim(-1) : a.a.dim(-2);
  s.k = a.trans_a ? a.a.dim(-2) : a.a.dim(-1);
  s.n = a.trans_b ? a.b.dim(-2) : a.b.dim(-1);
  HWT_CHECK(
      (a.trans_b ? a.b.dim(-1) : a.b.dim(-2)) == s.k && a.c.dim(-2) == s.m && a.c.dim(-1) == s.n,
      "matmul shapes a{} b{} c{}", a.a.shape.str(), a.b.shape.str(), a.c.shape.str());
  HWT_CHECK(!a.bias.defined() || a.bias.numel() == s.n, "matmul bias {} for {} columns",
            a.bias.str(), s.n);
  HWT_CHECK(a.act == Activation::None || (a.beta == 0.0f && a.pre_act.defined()),
            "matmul with an activation needs beta = 0 and pre_act");
  HWT_CHECK(!is_gated(a.act), "a gated activation runs as glu_forward after the GEMM, not fused");
  if (is_fp8(a.a.dtype) || is_fp8(a.b.dtype)) {
    HWT_CHECK(is_fp8(a.a.dtype) && is_fp8(a.b.dtype) &&
                  !(a.a.dtype == DType::F8E5M2 && a.b.dtype == DType::F8E5M2),
              "fp8 matmul of {} and {}: both fp8, not both e5m2", dtype_name(a.a.dtype),
              dtype_name(a.b.dtype));
    HWT_CHECK(rank == 2 && !a.trans_a && a.trans_b, "fp8 matmul: rank 2, a · bᵀ only");
    HWT_CHECK(is_float(a.c.dtype), "fp8 matmul into {}: c bf16, f16 or f32", a.c.str());
    HWT_CHECK(a.a_scale_inv.numel() == 1 && a.b_scale_inv.numel() == 1 &&
                  a.a_scale_inv.dtype == DType::F32 && a.b_scale_inv.dtype == DType::F32,
              "fp8 matmul: a_scale_inv and b_scale_inv f32 [1]");
  }
  return s;
}

GemmCall gemm_call(const Matmul& m, GemmRole role) {
  GemmCall g;
  g.shape = matmul_shape(m);
  g.role = role;
  g.dtype = m.a.dtype;
  g.out_dtype = m.c.dtype;
  g.accumulate = m.beta != 0.0f;
  g.bias = m.bias.defined();
  g.act = m.act;
  return g;
}

GemmCall plain_gemm(const GemmShape& shape, DType dtype) {
  GemmCall g;
  g.shape = shape;
  g.dtype = g.out_dtype = dtype;
  return g;
}

Matmul linear_forward_product(const LinearFwd& a) {
  if (a.fp8.forward) return fp8_forward_product(a);
  Matmul m;
  m.a = as_matrix(a.x);
  m.b = a.w;
  m.c = as_matrix(a.y);
  m.trans_b = true;
  m.bias = a.b;
  m.act = a.act;
  if (a.act != Activation::None) m.pre_act = as_matrix(a.pre_act);
  return m;
}

Matmul linear_input_grad_product(const LinearBwd& a) {
  HWT_CHECK(a.dx.defined(), "linear backward without dx has no input-gradient product");
  if (a.fp8.input_grad) return fp8_input_grad_product(a);
  Matmul m;
  m.a = as_matrix(a.dy);
  m.b = a.w;
  m.c = as_matrix(a.dx);
  m.beta = a.accumulate_dx ? 1.0f : 0.0f;
  return m;
}

Matmul linear_weight_grad_product(const LinearBwd& a) {
  if (a.fp8.weight_grad) return fp8_weight_grad_product(a);
  Matmul m;
  m.a = as_matrix(a.dy);
  m.b = as_matrix(a.x);
  m.c = a.dw.view(Shape{a.w.dim(0), a.w.cols()});
  m.trans_a = true;
  m.beta = 1.0f;
  return m;
}

}  // namespace hwt
