// The CUDA prune_small against the CPU reference on random inputs in f32, bf16 and f16, with
// ties at exactly tau and odd lengths (the scalar tail). DynaProp inside the optimizer steps is
// tested with the optimizers (cuda_ops_test.cpp).
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

}  // namespace
}  // namespace hwt
