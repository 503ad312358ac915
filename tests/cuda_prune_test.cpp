// The CUDA prune_small against the CPU reference on random inputs in f32, bf16 and f16, with
// ties at exactly tau, odd lengths (the scalar tail) and the gradient-clip comparison.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

class CudaPrune : public ::testing::TestWithParam<DType> {};

TEST_P(CudaPrune, MatchesTheCpuReference) {
  HWT_REQUIRE_GPU();
  Backend& gpu = test::gpu_ref();
  CpuBackend cpu(2);
  test::DevPool dev(gpu, GetParam());
  test::DevPool ref(cpu, DType::F32);
  for (const int64_t n : {int64_t{1}, int64_t{37}, int64_t{4096}, int64_t{1000003}}) {
    const float tau = 0.05f;
    std::vector<float> host = test::randn(n, static_cast<uint64_t>(n), 0.1f);
    for (size_t i = 0; i < host.size(); i += 7) host[i] = i % 2 ? tau : -tau;
    for (size_t i = 3; i < host.size(); i += 11) host[i] = 0.0f;
    host = dev.rounded(host);  // both sides prune the values the dtype holds
    const Tensor x = dev.act(Shape{n}, host), zeros = dev.make(DType::I32, Shape{2});
    const Tensor rx = ref.f32(Shape{n}, host), rzeros = ref.make(DType::I32, Shape{2});
    gpu.fill({zeros, 0});
    cpu.fill({rzeros, 0});
    gpu.prune_small({x, tau, zeros});
    gpu.prune_small({x, tau, zeros});  // a second pass prunes nothing more, counts again
    cpu.prune_small({rx, tau, rzeros});
    EXPECT_EQ(dev.read(x), ref.read(rx)) << "n=" << n;
    EXPECT_EQ(test::read_counter(gpu, zeros), 2 * test::read_counter(cpu, rzeros)) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaPrune, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

// Parameter gradients compared after unscaling and clipping, the factor read on the device.
TEST(CudaPruneGrads, ClipFactorMatchesTheCpuReference) {
  HWT_REQUIRE_GPU();
  Backend& gpu = test::gpu_ref();
  CpuBackend cpu(1);
  test::DevPool dev(gpu, DType::F32), ref(cpu, DType::F32);
  const int64_t n = 100001;
  const std::vector<float> host = test::randn(n, 4, 4.0f);
  for (const float norm_sq : {4096.0f, INFINITY}) {
    const std::vector<float> clip_values = {norm_sq, 8.0f};
    const Tensor x = dev.f32(Shape{n}, host), zeros = dev.make(DType::I32, Shape{2});
    const Tensor rx = ref.f32(Shape{n}, host), rzeros = ref.make(DType::I32, Shape{2});
    const Tensor c = dev.f32(Shape{2}, clip_values), rc = ref.f32(Shape{2}, clip_values);
    gpu.fill({zeros, 0});
    cpu.fill({rzeros, 0});
    gpu.prune_small({x, 0.01f, zeros, GradClip{c.flat_slice(0, 1), 2.0f, c.flat_slice(1, 1)}});
    cpu.prune_small({rx, 0.01f, rzeros, GradClip{rc.flat_slice(0, 1), 2.0f, rc.flat_slice(1, 1)}});
    EXPECT_EQ(dev.read(x), ref.read(rx)) << norm_sq;
    EXPECT_EQ(test::read_counter(gpu, zeros), test::read_counter(cpu, rzeros)) << norm_sq;
  }
}

}  // namespace
}  // namespace hwt
