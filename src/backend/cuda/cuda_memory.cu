// Fill, dtype conversion and standalone dropout: grid-stride elementwise kernels with 16-byte
// accesses where the pointers allow.
#include <cuda_fp8.h>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "core/integer_math.h"

namespace hwt::cuda {
namespace {

template <class T>
__global__ void fill_kernel(T* p, int64_t n, T value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = value;
}

template <class D, class S, int V>
__global__ void convert_kernel(D* dst, const S* src, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    if (i + V <= n) {
      float f[V];
      load_floats<S, V>(src + i, f);
      store_floats<D, V>(dst + i, f);
    } else {
      for (int64_t j = i; j < n; ++j) dst[j] = from_f<D>(to_f<S>(src[j]));
    }
  }
}

template <class D, class S>
void convert_typed(const Launch& l, void* dst, const void* src, int64_t n) {
  if (aligned16(dst) && aligned16(src)) {
    constexpr int V = 4;
    convert_kernel<D, S, V><<<grid_for(l, ceil_div(n, V)), kBlockThreads, 0, l.stream>>>(
        static_cast<D*>(dst), static_cast<const S*>(src), n);
  } else {
    convert_kernel<D, S, 1><<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(
        static_cast<D*>(dst), static_cast<const S*>(src), n);
  }
}

template <class S>
void convert_from(const Launch& l, void* dst, DType dst_dt, const void* src, int64_t n) {
  HWT_DISPATCH_FLOAT(dst_dt, D, convert_typed<D, S>(l, dst, src, n));
}

template <class T, int V>
__global__ void dropout_kernel(const T* x, T* y, int64_t n, DropArgs d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < n;
       i += stride) {
    if (i + V <= n) {
      float v[V], f[V];
      load_floats<T, V>(x + i, v);
      dropout_factors<V>(d.seed, static_cast<uint64_t>(i), d.p, d.scale, f);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = f[k] == 0.0f ? 0.0f : v[k] * f[k];
      store_floats<T, V>(y + i, v);
    } else {
      for (int64_t j = i; j < n; ++j) {
        const float f = dropout_factor(d.seed, static_cast<uint64_t>(j), d.p, d.scale);
        y[j] = from_f<T>(f == 0.0f ? 0.0f : to_f<T>(x[j]) * f);
      }
    }
  }
}

template <class T>
void dropout_typed(const Launch& l, const void* x, void* y, int64_t n, DropArgs d) {
  constexpr int V = kVec16<T>;
  if (aligned16(x) && aligned16(y))
    dropout_kernel<T, V><<<grid_for(l, ceil_div(n, V)), kBlockThreads, 0, l.stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n, d);
  else
    dropout_kernel<T, 1><<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(static_cast<const T*>(x),
                                                                         static_cast<T*>(y), n, d);
}

}  // namespace

void fill(const Launch& l, void* p, DType dt, int64_t n, float value) {
  if (n <= 0) return;
  switch (dt) {
    case DType::F32:
      fill_kernel<<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(static_cast<float*>(p), n, value);
      break;
    case DType::BF16:
      fill_kernel<<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(static_cast<bf16*>(p), n,
                                                                  __float2bfloat16_rn(value));
      break;
    case DType::F16:
      fill_kernel<<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(static_cast<f16*>(p), n,
                                                                  __float2half_rn(value));
      break;
    case DType::I32:
      fill_kernel<<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(static_cast<int32_t*>(p), n,
                                                                  static_cast<int32_t>(value));
      break;
    case DType::F8E4M3:
    case DType::F8E5M2:
      fill_kernel<<<grid_for(l, n), kBlockThreads, 0, l.stream>>>(
          static_cast<uint8_t*>(p), n,
          static_cast<uint8_t>(__nv_cvt_float_to_fp8(value, __NV_SATFINITE,
                                                     dt == DType::F8E4M3 ? __NV_E4M3 : __NV_E5M2)));
      break;
  }
}

void convert(const Launch& l, void* dst, DType dst_dt, const void* src, DType src_dt, int64_t n) {
  if (n <= 0) return;
  HWT_DISPATCH_FLOAT(src_dt, S, convert_from<S>(l, dst, dst_dt, src, n));
}

void dropout(const Launch& l, DType dt, const void* x, void* y, int64_t n, DropArgs d) {
  if (n <= 0) return;
  HWT_DISPATCH_FLOAT(dt, T, dropout_typed<T>(l, x, y, n, d));
}

}  // namespace hwt::cuda
