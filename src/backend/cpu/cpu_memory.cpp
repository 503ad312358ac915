// CpuBackend: construction, memory, casts and reductions.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/vector_math.h"
#include "core/bf16.h"
#include "core/fp8.h"
#include "core/host_memory.h"
#include "core/integer_math.h"

namespace hwt {

void expect_f32(const Tensor& t, const char* what) {
  HWT_CHECK(t.defined() && t.dtype == DType::F32 && t.device == Device::Cpu,
            "cpu backend: {} must be a defined f32 cpu tensor, got {}", what, t.str());
}

void expect_i32(const Tensor& t, const char* what) {
  HWT_CHECK(t.defined() && t.dtype == DType::I32 && t.device == Device::Cpu,
            "cpu backend: {} must be a defined i32 cpu tensor, got {}", what, t.str());
}

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

CpuBackend::CpuBackend(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = threads;
  omp_set_num_threads(threads_);
  openblas_set_num_threads(threads_);
}

std::string CpuBackend::name() const {
  return fmt::format("cpu ({} threads)", threads_);
}

void* CpuBackend::allocate(size_t bytes) {
  // Large requests are checked against the memory available first: under overcommit they would
  // succeed here and the process be killed later, when it touches them. They are touched (zeroed)
  // at once, so that the next check sees what is really left.
  constexpr size_t kCheckedFrom = size_t{64} << 20;
  const bool large = bytes >= kCheckedFrom;
  const std::optional<uint64_t> available = large ? available_host_memory() : std::nullopt;
  auto out_of_memory = [&] {
    throw OutOfMemory(fmt::format("cpu backend: out of memory allocating {} bytes", bytes), bytes,
                      available.value_or(0));
  };
  if (available && bytes > *available) out_of_memory();
  // 64-byte alignment for vector loads; aligned_alloc wants a multiple of the alignment.
  if (bytes > SIZE_MAX - 64) out_of_memory();
  void* p = std::aligned_alloc(64, round_up(bytes, 64));
  if (!p) out_of_memory();
  if (large) {
    // In pieces over the threads, so that pages start out spread as the parallel loops use them.
    constexpr int64_t kPiece = int64_t{1} << 20;
    const auto n = static_cast<int64_t>(bytes);
#pragma omp parallel for schedule(static)
    for (int64_t at = 0; at < n; at += kPiece)
      std::memset(static_cast<char*>(p) + at, 0, static_cast<size_t>(std::min(kPiece, n - at)));
  }
  return p;
}

void CpuBackend::deallocate(void* p) {
  std::free(p);
}

void CpuBackend::upload(Tensor dst, const void* host) {
  std::memcpy(dst.data, host, dst.bytes());
}

void CpuBackend::download(void* host, Tensor src) {
  std::memcpy(host, src.data, src.bytes());
}

void CpuBackend::copy(const Copy& a) {
  HWT_CHECK(a.dst.bytes() == a.src.bytes() && a.dst.dtype == a.src.dtype, "copy {} <- {}",
            a.dst.str(), a.src.str());
  std::memmove(a.dst.data, a.src.data, a.dst.bytes());
}

void CpuBackend::fill(const Fill& a) {
  const Tensor& t = a.t;
  const float value = a.value;
  const int64_t n = t.numel();
  switch (t.dtype) {
    case DType::F32:
      std::fill_n(t.as<float>(), n, value);
      break;
    case DType::I32:
      std::fill_n(t.as<int32_t>(), n, static_cast<int32_t>(value));
      break;
    case DType::BF16:
      std::fill_n(t.as<uint16_t>(), n, float_to_bf16(value));
      break;
    case DType::F8E4M3:
    case DType::F8E5M2:
      std::fill_n(t.as<uint8_t>(), n, float_to_fp8(value, fp8_format(t.dtype)));
      break;
    case DType::F16:
      fail("cpu backend: fill of f16 is not supported");
  }
}

void CpuBackend::convert(const Convert& a) {
  const Tensor &dst = a.dst, &src = a.src;
  HWT_CHECK(dst.numel() == src.numel(), "convert {} <- {}", dst.str(), src.str());
  const int64_t n = dst.numel();
  if (dst.dtype == src.dtype) return copy({dst, src});
  if (dst.dtype == DType::BF16 && src.dtype == DType::F32) {
    const float* s = src.as<float>();
    uint16_t* d = dst.as<uint16_t>();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_bf16(s[i]);
    return;
  }
  if (dst.dtype == DType::F32 && src.dtype == DType::BF16) {
    const uint16_t* s = src.as<uint16_t>();
    float* d = dst.as<float>();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) d[i] = bf16_to_float(s[i]);
    return;
  }
  fail("cpu backend: conversion {} -> {} is not supported", dtype_name(src.dtype),
       dtype_name(dst.dtype));
}

namespace {

// Sum of chunk_sum(p, count) in double over fixed chunks of x, combined in order
// (thread-count independent).
template <class ChunkSum>
float chunked_sum(const Tensor& x, ChunkSum chunk_sum) {
  expect_f32(x, "x");
  const float* p = x.as<float>();
  const int64_t n = x.numel();
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = ceil_div(n, kChunk);
  std::vector<double> part(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk;
    part[static_cast<size_t>(c)] = chunk_sum(p + begin, std::min(kChunk, n - begin));
  }
  double total = 0;
  for (double s : part) total += s;
  return static_cast<float>(total);
}

}  // namespace

void CpuBackend::sum(const Reduce& a) {
  expect_f32(a.out, "out");
  a.out.as<float>()[0] = chunked_sum(a.x, [](const float* p, int64_t count) {
    double s = 0;
    for (int64_t i = 0; i < count; ++i) s += p[i];
    return s;
  });
}

void CpuBackend::sum_squares(const Reduce& a) {
  expect_f32(a.out, "out");
  a.out.as<float>()[0] = chunked_sum(a.x, vec::sum_squares);
}

}  // namespace hwt
