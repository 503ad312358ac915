// Helpers for tests that compare the CUDA backend with the CPU reference: one shared CUDA
// backend (or none, and the test skips), and tensors in any activation dtype built from and
// read back as host floats (the dtype casts run on the device and are tested separately).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backend/backend.h"
#include "train/run_setup.h"

namespace hwt::test {

// A CUDA backend made as a run makes it (train.device = cuda; the GPU options of `t`).
inline std::unique_ptr<Backend> make_gpu(TrainConfig t = {}) {
  t.device = DeviceChoice::Cuda;
  return make_backend(t);
}

// The process-wide CUDA backend, or nullptr when there is no GPU (or no CUDA build).
inline Backend* gpu() {
  static std::unique_ptr<Backend> be = cuda_available() ? make_gpu() : nullptr;
  return be.get();
}

// The CUDA backend of a test that already skipped without one.
inline Backend& gpu_ref() {
  Backend* be = gpu();
  if (!be) throw std::logic_error("test needs a GPU but did not skip");
  return *be;
}

// A second CUDA backend on the same device with other GPU options (train.precision tf32,
// train.gemm_autotune, train.deterministic_attention), for a test that already skipped without a
// GPU; one per option set. It runs on its own stream: synchronise the shared backend before
// handing it tensors, and it before reading them back.
inline Backend& gpu_ref_with(const TrainConfig& t) {
  static std::map<std::tuple<Precision, bool, bool>, std::unique_ptr<Backend>> backends;
  auto& be = backends[{t.precision, t.gemm_autotune, t.deterministic_attention}];
  if (!be) be = make_gpu(t);
  return *be;
}

// A CUDA backend of the test's own (nothing grown, planned or captured yet), for a test that
// already skipped without a GPU.
inline std::unique_ptr<Backend> fresh_gpu(const TrainConfig& t = {}) {
  return make_gpu(t);
}

// Skips a GPU test where there is no GPU, but fails it when the run says one is expected
// (HWT_EXPECT_GPU=1, set by the GPU scripts): a broken CUDA build or device query must not pass
// as "skipped".
#define HWT_REQUIRE_GPU()                                                                        \
  do {                                                                                           \
    if (!::hwt::test::gpu()) {                                                                   \
      if (std::getenv("HWT_EXPECT_GPU")) FAIL() << "HWT_EXPECT_GPU is set but no GPU is usable"; \
      GTEST_SKIP() << "skipped: no GPU";                                                         \
    }                                                                                            \
  } while (0)

// Tensors on a backend in a chosen dtype, released with the pool.
class DevPool {
 public:
  DevPool(Backend& be, DType act) : be_(be), act_(act) {}
  DType act_dtype() const { return act_; }

  Tensor make(DType dt, Shape s) {
    bufs_.emplace_back(be_, static_cast<size_t>(s.numel()) * dtype_size(dt));
    return bufs_.back().tensor(dt, s);
  }
  Tensor f32(Shape s, const std::vector<float>& host) {
    Tensor t = make(DType::F32, s);
    EXPECT_EQ(static_cast<int64_t>(host.size()), s.numel());
    be_.upload(t, host.data());
    return t;
  }
  // An activation-dtype tensor holding host values (rounded to the dtype).
  Tensor act(Shape s, const std::vector<float>& host) {
    if (act_ == DType::F32) return f32(s, host);
    Tensor t = make(act_, s);
    be_.convert({t, f32(s, host)});
    return t;
  }
  Tensor i32(Shape s, const std::vector<int32_t>& host) {
    Tensor t = make(DType::I32, s);
    be_.upload(t, host.data());
    return t;
  }
  Tensor poisoned(DType dt, Shape s) {
    Tensor t = make(dt, s);
    be_.fill({t, NAN});
    return t;
  }
  Tensor poisoned_act(Shape s) { return poisoned(act_, s); }
  Tensor zeros(Shape s) {
    Tensor t = make(DType::F32, s);
    be_.fill({t, 0.0f});
    return t;
  }
  std::vector<float> read(Tensor t) {
    if (t.dtype != DType::F32) {
      Tensor f = make(DType::F32, t.shape);
      be_.convert({f, t});
      t = f;
    }
    std::vector<float> v(static_cast<size_t>(t.numel()));
    be_.download(v.data(), t);
    return v;
  }
  std::vector<int32_t> read_i32(Tensor t) {
    std::vector<int32_t> v(static_cast<size_t>(t.numel()));
    be_.download(v.data(), t);
    return v;
  }
  // Host values as the activation dtype stores them.
  std::vector<float> rounded(const std::vector<float>& host) {
    if (act_ == DType::F32) return host;
    return read(act(Shape{static_cast<int64_t>(host.size())}, host));
  }

 private:
  Backend& be_;
  DType act_;
  std::vector<DeviceBuffer> bufs_;
};

// A tensor of any float dtype on any backend, as host floats.
inline std::vector<float> read_floats(Backend& be, Tensor t) {
  return DevPool(be, t.dtype).read(t);
}

// The dtype's name as a parameterised test's label: "f32", "bf16", "f16".
inline std::string dtype_label(const ::testing::TestParamInfo<DType>& i) {
  return std::string(dtype_name(i.param));
}

// Relative-error tolerance for outputs of the given activation dtype.
inline double tol(DType dt, double f32_tol = 1e-5, double low_tol = 1e-2) {
  return dt == DType::F32 ? f32_tol : low_tol;
}

}  // namespace hwt::test
