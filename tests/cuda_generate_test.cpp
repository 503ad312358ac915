// Generation on the GPU against the CPU reference, for each causal-LM family: two prompts of
// different lengths in one batch through Model::prefill and 40 Model::decode steps (the
// flash-decoding kernel, kv_append, per-sequence positions), the same weights on both sides.
// In f32 every step's logits agree and greedy picks the same tokens; in bf16 the first steps'
// logits agree within bf16's rounding (later tokens may part where two logits nearly tie).
// Greedy steps chained on the device (recorded and replayed) give the single steps' picks.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "model/model.h"
#include "model_test_util.h"
#include "test_util.h"

namespace hwt {
namespace {

using Vec = std::vector<float>;

class CudaGenerate : public ::testing::TestWithParam<std::tuple<std::string, DType>> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
};

// Row `row` of the token logits, cut to the vocabulary.
Vec logits_row(Model& m, int64_t row) {
  Vec v = test::read_floats(m.backend(), m.token_logits().row_slice(row, 1));
  v.resize(static_cast<size_t>(m.config().vocab_size));
  return v;
}

int32_t argmax(const Vec& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST_P(CudaGenerate, PrefillAndDecodeMatchTheCpu) {
  const auto& [family, dt] = GetParam();
  const ModelConfig cfg = test::lm_family(family);
  CpuBackend cpu(2);
  Model ref(cfg, cpu, DType::F32), dev(cfg, test::gpu_ref(), dt);
  const std::vector<int32_t> lengths = {7, 3};
  const int64_t steps = 40, seq = 7, batch = 2, capacity = seq + steps;
  Batch b;
  b.batch = batch;
  b.seq = seq;
  for (int64_t i = 0; i < batch * seq; ++i)
    b.ids.push_back(static_cast<int32_t>((i * 37 + 5) % 97));
  b.lengths = lengths;
  for (Model* m : {&ref, &dev}) {
    m->init_parameters(7);
    m->plan(batch, seq, capacity);
    m->prefill(b);
  }
  // f32: the two backends' GEMMs, flash kernels and softmax sum in other orders (a few ulps per
  // op, ~1e-6 relative through two layers); 1e-4 leaves room for the decode kernel's split
  // combine. bf16: activations rounded to 8 bits at every op (~2^-9 each) against f32.
  const double tol = dt == DType::F32 ? 1e-4 : 3e-2;
  const int64_t compared = dt == DType::F32 ? steps : 4;  // steps whose tokens both sides share
  std::vector<std::vector<int32_t>> tokens(batch);
  for (int64_t step = 0; step < compared; ++step) {
    std::vector<int32_t> next;
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t row = step == 0 ? i * seq + lengths[static_cast<size_t>(i)] - 1 : i;
      const Vec want = logits_row(ref, row), got = logits_row(dev, row);
      ASSERT_LT(test::rel_err(got, want), tol)
          << family << " " << dtype_name(dt) << " step " << step << " sequence " << i;
      if (dt == DType::F32) {  // bf16's rounding may swap two near-equal logits
        EXPECT_EQ(argmax(got), argmax(want)) << family << " step " << step << " sequence " << i;
      }
      next.push_back(argmax(want));  // both sides continue with the reference's token
      tokens[static_cast<size_t>(i)].push_back(next.back());
    }
    if (step + 1 < compared)
      for (Model* m : {&ref, &dev}) m->decode(next);
  }
  EXPECT_EQ(dev.kv_lengths(), ref.kv_lengths());
}

// The same kernels in the same order on one GPU: chained steps (a recorded step with the argmax
// and the next inputs on the device) pick what single steps and their argmax pick, bitwise.
TEST_P(CudaGenerate, ChainedGreedyStepsEqualSingleSteps) {
  const auto& [family, dt] = GetParam();
  const ModelConfig cfg = test::lm_family(family);
  Batch b = test::random_batch(cfg, 2, 7, 3);
  b.lengths = {7, 4};
  const int64_t steps = 40;
  std::vector<std::vector<int32_t>> picks;
  for (const int64_t chunk : {0, 7, 40}) {
    Model m(cfg, test::gpu_ref(), dt);
    m.init_parameters(7);
    m.plan(2, 7, 7 + steps + 1);
    picks.push_back(test::greedy_picks(m, b, steps, chunk));
  }
  EXPECT_EQ(picks[1], picks[0]) << "chunks of 7";
  EXPECT_EQ(picks[2], picks[0]) << "one chunk";
}

INSTANTIATE_TEST_SUITE_P(Families, CudaGenerate,
                         ::testing::Combine(::testing::Values("gpt2", "llama", "neox", "qwen2"),
                                            ::testing::Values(DType::F32, DType::BF16)),
                         [](const auto& i) {
                           return std::get<0>(i.param) + "_" +
                                  std::string(dtype_name(std::get<1>(i.param)));
                         });

}  // namespace
}  // namespace hwt
