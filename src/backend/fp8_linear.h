// The fp8 form of the linear ops' products (Fp8Linear in ops.h), described once for every
// backend: which casts each product needs, where they land in the workspace, and the fp8 product
// that reads them. A backend runs a product as cast_*_operands(*this, a), then matmul of gemm.h's
// linear_*_product(a), which is this file's fp8 product where the flag is set.
//
// Hopper's fp8 GEMMs read both operands K-major (c = a · bᵀ), so each product has its own copies:
//   forward      y  = x · wᵀ       x  [M,K], w  [N,K]          (E4M3, E4M3)
//   input grad   dx = dy · w       dy [M,N], wᵀ [K,N]          (E5M2, E4M3)
//   weight grad  dw += dyᵀ · x     dyᵀ [N,M], xᵀ [K,M]         (E5M2, E4M3)
// dy is cast once into both its layouts, and w's forward cast also writes wᵀ where the layer keeps
// it (Fp8Linear::w_t). Each tensor's first cast in a step's forward and backward raises its amax
// and counts; a later cast of it with the same scale keeps no figures (they would count its
// values twice).
// Copies the producer of x or dy already wrote (Fp8Linear::made) are read as they are: their
// producer kept the figures.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/ops.h"

namespace hwt {

class Backend;

// The workspace a linear of x [M,K] and w [N,K] needs: the forward's two copies, or the
// backward's four (dy and dyᵀ, wᵀ, xᵀ), whichever is more.
size_t fp8_linear_workspace_bytes(int64_t m, int64_t n, int64_t k);

// Where, in f's workspace, the op producing dy may write the backward's dy [M,N] and dyᵀ [N,M]
// (E5M2, with dy's figures) to hand them to the backward as made copies; and `scratch`, M floats
// after them that nothing reads or writes until the backward's products run.
struct Fp8DyPlaces {
  Fp8Copies made;
  Tensor scratch;
};
Fp8DyPlaces fp8_dy_places(const Fp8Linear& f, int64_t m, int64_t n);

// The casts of each product's operands, run on `be`; nothing when the product is not fp8.
void cast_forward_operands(Backend& be, const LinearFwd& a);
void cast_input_grad_operands(Backend& be, const LinearBwd& a);
void cast_weight_grad_operands(Backend& be, const LinearBwd& a);

// The fp8 products over those casts (the epilogues as in the products they stand for).
Matmul fp8_forward_product(const LinearFwd& a);
Matmul fp8_input_grad_product(const LinearBwd& a);
Matmul fp8_weight_grad_product(const LinearBwd& a);

// A [rows, cols] tensor of one-byte `dt` at `offset` bytes into `storage`, which must hold it
// (data stays null on the trace backend): where fp8 copies are kept.
Tensor fp8_copy_in(const Tensor& storage, int64_t offset, DType dt, int64_t rows, int64_t cols);

// Floats from one tensor's scale_inv to the next in an Fp8ScaleUpdate: 1 for [T], k for [T, k];
// 0 where scale_inv has neither shape.
int64_t fp8_scale_inv_stride(const Fp8ScaleUpdate& a);

// Copies out and out_t written with s's scale, keeping s's figures.
Fp8Out fp8_out(const Tensor& out, const Tensor& out_t, const Fp8Scaled& s);

// Checks an element-wise op's fp8 copies (Fp8Out) against its [rows, cols] output: one-byte fp8
// tensors of that shape, as it is and transposed, a scale of one f32, amax and counts together.
void check_fp8_out(const Fp8Out& o, int64_t rows, int64_t cols, const char* op);
// Writes them on `be` from the op's output `values` ([rows, cols], f32 on the CPU): the casts
// the fused kernels stand for, the first layout keeping the figures.
void cast_fp8_out(Backend& be, const Tensor& values, const Fp8Out& o);

}  // namespace hwt
