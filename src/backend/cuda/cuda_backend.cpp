// CudaBackend: construction, memory, transfers, casts, reductions and the device error word.
#include <fmt/format.h>

#include <utility>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "core/integer_math.h"

namespace hwt {

using cuda::check;
using cuda::check_launch;

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device / no driver" status
    return 0;
  }
  return n;
}

std::string cuda_pci_bus_id(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return id;
}

CudaBackend::CudaBackend(int device, CudaOptions options) : device_(device), options_(options) {
  const int count = cuda_device_count();
  if (device < 0 || device >= count)
    fail_input("cuda device {} requested but {} CUDA device(s) are visible", device, count);
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  device_name_ = prop.name;
  if (options.fp8 && prop.major * 10 + prop.minor < 89)
    fail_input(
        "train.precision=\"fp8\" needs fp8 tensor cores (compute capability 8.9 or later: Ada, "
        "Hopper, Blackwell); {} is {}.{}: train in \"bf16\"",
        prop.name, prop.major, prop.minor);
  launch_.sms = prop.multiProcessorCount;
  launch_.l2_bytes = prop.l2CacheSize;
  launch_.pdl = prop.major >= 9 && cuda::dependent_launch_built();
  check(cudaStreamCreateWithFlags(&launch_.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMalloc(&launch_.errors, sizeof(int)), "allocating the error word");
  check(cudaMemset(launch_.errors, 0, sizeof(int)), "clearing the error word");
  check(cudaMallocHost(&errors_host_, sizeof(int)), "allocating pinned memory");
  check(cudaMalloc(&partials_, cuda::kReduceBlocks * sizeof(double)), "allocating partials");
  gemm_ = std::make_unique<cuda::Gemm>(options.tf32, options.gemm_autotune);
}

CudaBackend::~CudaBackend() {
  abort_capture();
  cudaStreamSynchronize(launch_.stream);
  for (cudaGraphExec_t exec : graph_execs_)
    if (exec) cudaGraphExecDestroy(exec);
  drop_all_kept();
  gemm_.reset();
  cudaFree(scratch_);
  cudaFree(partials_);
  cudaFree(counters_);
  cudaFreeHost(errors_host_);
  cudaFree(launch_.errors);
  cudaStreamDestroy(launch_.stream);
}

std::string CudaBackend::name() const {
  return fmt::format("cuda:{} ({}, {} SMs{})", device_, device_name_, launch_.sms,
                     options_.tf32 ? ", tf32" : "");
}

void* CudaBackend::allocate(size_t bytes) {
  outside_capture("allocate()");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    const std::string what =
        fmt::format("cuda backend: out of memory allocating {} bytes ({} of {} bytes free): {}",
                    bytes, free_b, total_b, cudaGetErrorString(e));
    // Too large for the GPU: set-up names the config keys that asked for it (run_setup.cpp).
    if (e == cudaErrorMemoryAllocation) throw OutOfMemory(what, bytes, free_b);
    fail("{}", what);
  }
  return p;
}

void CudaBackend::deallocate(void* p) {
  cudaFree(p);
}

void* CudaBackend::scratch(size_t bytes) {
  if (bytes <= scratch_bytes_) return scratch_;
  outside_capture(fmt::format("growing scratch memory from {} to {} bytes", scratch_bytes_, bytes));
  // Earlier ops on the stream may still read the old buffer; kept graphs point into it.
  check(cudaStreamSynchronize(launch_.stream), "growing scratch");
  drop_all_kept();
  check(cudaFree(scratch_), "freeing scratch");
  scratch_ = nullptr;
  scratch_bytes_ = 0;
  const size_t rounded = round_up(bytes, 1u << 20);
  scratch_ = allocate(rounded);
  scratch_bytes_ = rounded;
  return scratch_;
}

unsigned* CudaBackend::zeroed_counters(int64_t words) {
  if (words <= counter_words_) return counters_;
  outside_capture(fmt::format("growing the counters from {} to {} words", counter_words_, words));
  // Earlier ops on the stream may still use the old ones; kept graphs point into them.
  check(cudaStreamSynchronize(launch_.stream), "growing the counters");
  drop_all_kept();
  check(cudaFree(counters_), "freeing the counters");
  counters_ = nullptr;
  counter_words_ = 0;
  const size_t bytes = static_cast<size_t>(words) * sizeof(unsigned);
  counters_ = static_cast<unsigned*>(allocate(bytes));
  check(cudaMemsetAsync(counters_, 0, bytes, launch_.stream), "clearing the counters");
  counter_words_ = words;
  return counters_;
}

void CudaBackend::notice(std::string text) {
  if (noticed_.insert(text).second) new_notices_.push_back(std::move(text));
}

std::vector<std::string> CudaBackend::take_notices() {
  return std::exchange(new_notices_, {});
}

void CudaBackend::check_device_errors() {
  check(cudaMemcpyAsync(errors_host_, launch_.errors, sizeof(int), cudaMemcpyDeviceToHost,
                        launch_.stream),
        "reading the error word");
  check(cudaStreamSynchronize(launch_.stream), "cudaStreamSynchronize");
  const int e = *errors_host_;
  if (e == 0) return;
  check(cudaMemsetAsync(launch_.errors, 0, sizeof(int), launch_.stream), "clearing errors");
  if (e & cuda::kErrTokenId) fail_input("token id outside the vocabulary (embedding lookup)");
  fail_input("cross-entropy target class outside the number of classes");
}

void CudaBackend::synchronize() {
  outside_capture("synchronize()");
  check(cudaStreamSynchronize(launch_.stream), "cudaStreamSynchronize");
  check_device_errors();
}

void CudaBackend::upload(Tensor dst, const void* host) {
  // A captured copy would read the host memory when the graph runs, not now.
  outside_capture("upload()");
  cuda::expect_on_device(dst, "upload destination");
  check(cudaMemcpyAsync(dst.data, host, dst.bytes(), cudaMemcpyHostToDevice, launch_.stream),
        "upload");
}

void CudaBackend::download(void* host, Tensor src) {
  outside_capture("download()");
  cuda::expect_on_device(src, "download source");
  check(cudaMemcpyAsync(host, src.data, src.bytes(), cudaMemcpyDeviceToHost, launch_.stream),
        "download");
  check_device_errors();
}

void CudaBackend::copy(const Copy& a) {
  const Tensor &dst = a.dst, &src = a.src;
  cuda::expect_on_device(dst, "copy destination");
  cuda::expect_on_device(src, "copy source");
  HWT_CHECK(dst.bytes() == src.bytes() && dst.dtype == src.dtype, "copy {} <- {}", dst.str(),
            src.str());
  check(cudaMemcpyAsync(dst.data, src.data, dst.bytes(), cudaMemcpyDeviceToDevice, launch_.stream),
        "copy");
}

void CudaBackend::fill(const Fill& a) {
  cuda::expect_on_device(a.t, "fill");
  cuda::fill(launch_, a.t.data, a.t.dtype, a.t.numel(), a.value);
  check_launch("fill");
}

void CudaBackend::convert(const Convert& a) {
  const Tensor &dst = a.dst, &src = a.src;
  cuda::expect_float(dst, "convert destination");
  cuda::expect_float(src, "convert source");
  HWT_CHECK(dst.numel() == src.numel(), "convert {} <- {}", dst.str(), src.str());
  cuda::convert(launch_, dst.data, dst.dtype, src.data, src.dtype, dst.numel());
  check_launch("convert");
}

void CudaBackend::reduce(Tensor x, Tensor out, bool squares, const char* op) {
  cuda::expect_float(x, "x");
  cuda::expect_dtype(out, DType::F32, "out");
  cuda::reduce_sum(launch_, x.dtype, x.data, x.numel(), squares, out.as<float>(), partials_);
  check_launch(op);
}

void CudaBackend::sum(const Reduce& a) {
  reduce(a.x, a.out, false, "sum");
}
void CudaBackend::sum_squares(const Reduce& a) {
  reduce(a.x, a.out, true, "sum_squares");
}

void CudaBackend::prune_small(const PruneSmall& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_dtype(a.zeros, DType::I32, "zeros");
  HWT_CHECK(a.zeros.numel() == 2 && reinterpret_cast<uintptr_t>(a.zeros.data) % 8 == 0,
            "prune_small counter {} must be an 8-byte aligned i32 [2]", a.zeros.str());
  cuda::prune_small(launch_, a.x.dtype, a.x.data, a.x.numel(), a.tau,
                    static_cast<unsigned long long*>(a.zeros.data));
  check_launch("prune_small");
}

namespace cuda {

void expect_on_device(const Tensor& t, const char* what) {
  HWT_CHECK(t.defined() && t.device == Device::Cuda,
            "cuda backend: {} must be a defined cuda tensor, got {} on {}", what, t.str(),
            device_name(t.device));
}

void expect_float(const Tensor& t, const char* what) {
  expect_on_device(t, what);
  HWT_CHECK(is_float(t.dtype), "cuda backend: {} must be f32, bf16 or f16, got {}", what, t.str());
}

void expect_dtype(const Tensor& t, DType dt, const char* what) {
  expect_on_device(t, what);
  HWT_CHECK(t.dtype == dt, "cuda backend: {} must be {}, got {}", what, dtype_name(dt), t.str());
}

void expect_same(const Tensor& t, const Tensor& ref, const char* what) {
  expect_on_device(t, what);
  HWT_CHECK(t.dtype == ref.dtype && t.numel() == ref.numel(),
            "cuda backend: {} is {} but must match {}", what, t.str(), ref.str());
}

DropArgs drop_args(const Dropout& d) {
  DropArgs r;
  if (d.active()) {
    r.p = d.p;
    r.seed = d.seed;
    r.scale = 1.0f / (1.0f - d.p);
  }
  return r;
}

}  // namespace cuda
}  // namespace hwt
