// The GEMMs of the backend ops, described once. Every backend runs the linear layers' products
// as the Matmul arguments built here (linear_*_product), the trace records each GEMM an op runs
// as a GemmCall, and the GEMM timer replays a GemmCall through the backend's matmul op, so
// what the analyses model and measure is what training runs.
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "backend/ops.h"
#include "core/gemm_shape.h"

namespace hwt {

// The GEMM library's workspace a GPU backend allocates once (cuBLASLt's recommended size for
// Hopper); `hwt memory` adds it to a step's planned memory.
inline constexpr size_t kGemmWorkspaceBytes = 32u << 20;

// What a GEMM operand holds: decides which buffer it lives in and which sparsity applies.
enum class Operand : uint8_t { Activation, Weight, Gradient };
std::string_view operand_name(Operand o);

// What a GEMM of an op computes (row-major; weights stored out×in, attention per batch × head).
enum class GemmRole : uint8_t {
  LinearForward,       // y = x·Wᵀ
  LinearInputGrad,     // dx = dy·W
  LinearWeightGrad,    // dW += dyᵀ·x
  AttentionScores,     // S = Q·Kᵀ
  AttentionContext,    // O = P·V
  AttentionValueGrad,  // dV = Pᵀ·dO
  AttentionProbGrad,   // dP = dO·Vᵀ
  AttentionQueryGrad,  // dQ = dS·K
  AttentionKeyGrad,    // dK = dSᵀ·Q
  Matmul,              // a product of two activations (the matmul op)
};

std::string_view role_name(GemmRole r);   // "linear_forward", ...
std::string_view role_label(GemmRole r);  // the product: "x.W^T", "dy.W", "Q.K^T", ...
Operand operand_a(GemmRole r);
Operand operand_b(GemmRole r);
// Attention products that come before the softmax (or its backward) in the fused kernels.
bool before_softmax(GemmRole r);

// One GEMM as an op issues it: the product, what it computes, the dtypes, and what is fused into
// it (accumulation into C, a bias, an activation).
struct GemmCall {
  GemmShape shape;
  GemmRole role = GemmRole::Matmul;
  DType dtype = DType::F32;      // A and B
  DType out_dtype = DType::F32;  // C
  bool accumulate = false;       // C += A·B
  bool bias = false;
  Activation act = Activation::None;

  auto key() const {
    return std::tuple_cat(shape.key(), std::tie(role, dtype, out_dtype, accumulate, bias, act));
  }
  bool operator==(const GemmCall& o) const { return key() == o.key(); }
  bool operator<(const GemmCall& o) const { return key() < o.key(); }
};

// A product of two activations of `dtype` with nothing fused: the GEMMs the model sweeps fit on.
GemmCall plain_gemm(const GemmShape& shape, DType dtype);

// The product a Matmul computes; checks that its tensors fit together.
GemmShape matmul_shape(const Matmul& m);
GemmCall gemm_call(const Matmul& m, GemmRole role);

// The linear ops' products: y = act(x·wᵀ + b), dx (+)= dy·w and dw += dyᵀ·x (dw in f32); in fp8
// where the op's Fp8Linear says so (backend/fp8_linear.h: their casts run first).
Matmul linear_forward_product(const LinearFwd& a);
Matmul linear_input_grad_product(const LinearBwd& a);
Matmul linear_weight_grad_product(const LinearBwd& a);

}  // namespace hwt
