// A small causal LM trained in fp8 on the GPU against the same model trained in fp8 on the CPU
// (fp32 activations, the same fp8 operand casts and delayed scaling): ten AdamW steps with their
// scale updates, with the device's activations in f32 and in bf16.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "model/model.h"
#include "model_test_util.h"
#include "test_util.h"
#include "train/fp8_training.h"
#include "train/optimizer.h"

namespace hwt {
namespace {

using Vec = std::vector<float>;

class CudaFp8Model : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
};

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaFp8Model, ::testing::Values(DType::F32, DType::BF16),
                         test::dtype_label);

// The two sides cast nearly the same values (the device's activations are rounded otherwise, and
// its sums run in another order), so most codes agree and the rest differ by one fp8 step, which
// AdamW's normalised updates carry on. How far that alone moves ten steps was measured on the CPU
// against itself, with the initial weights scaled by 1 + 1e-7 to 2e-3 times a normal draw: the
// losses stay within 1e-3, the parameters move 0.5% to 1.8% (4e-6 to 5e-4 without fp8) and
// single scales up to 8%. The tolerances below leave room above those; a cast at a wrong scale
// or a scale that never moves is off by far more.
void ten_steps_match_cpu(const ModelConfig& cfg, DType device_dtype, size_t fp8_layers_expected) {
  constexpr int64_t kBatch = 4, kSeq = 20;  // 80 rows
  CpuBackend cpu(2);
  struct Side {
    std::unique_ptr<Model> model;
    std::unique_ptr<Optimizer> opt;
    std::unique_ptr<Fp8Training> fp8;
    Vec losses;
  };
  auto side = [&](Backend& be, DType dt) {
    Side s;
    s.model = std::make_unique<Model>(cfg, be, dt);
    s.model->plan(kBatch, kSeq);
    s.model->init_parameters(7);
    OptimConfig oc;
    s.opt = std::make_unique<Optimizer>(oc, s.model->params(), 1.0);
    s.fp8 = std::make_unique<Fp8Training>(*s.model, Fp8ScalingOptions{16}, fp8_layers(*s.model),
                                          kBatch * kSeq);
    return s;
  };
  Side ref = side(cpu, DType::F32), dev = side(test::gpu_ref(), device_dtype);
  ASSERT_EQ(ref.fp8->layers().size(), fp8_layers_expected);
  const Batch b = test::random_batch(cfg, kBatch, kSeq, 100);
  for (int64_t step = 1; step <= 10; ++step)
    for (Side* s : {&ref, &dev}) {
      s->model->params().zero_grads();
      s->model->set_batch(b);
      s->model->forward(true, static_cast<uint64_t>(step));
      s->losses.push_back(static_cast<float>(s->model->losses().mean()));
      s->model->backward();
      s->opt->step(step, 1e-3);
      s->fp8->end_step();
    }
  EXPECT_LT(test::rel_err(dev.losses, ref.losses), 1e-2) << "loss trajectory";
  EXPECT_LT(ref.losses.back(), ref.losses.front()) << "the reference run should learn";
  EXPECT_LT(test::rel_err(test::read_floats(test::gpu_ref(), dev.model->params().params_flat()),
                          test::read_floats(cpu, ref.model->params().params_flat())),
            3e-2)
      << "parameters after 10 steps";
  const std::vector<Fp8TensorFigures> fr = ref.fp8->take_figures(), fd = dev.fp8->take_figures();
  ASSERT_EQ(fr.size(), fd.size());
  for (size_t i = 0; i < fr.size(); ++i) {
    EXPECT_EQ(fd[i].name, fr[i].name);
    EXPECT_NE(fr[i].scale, 1.0f) << fr[i].name << ": the scale followed the amaxes";
    // Scales are fp8_max / amax: the amaxes differ as the trajectories do (above). With bf16
    // activations the device's trajectory parts further (every activation rounded to 8 bits):
    // in the Llama-style model a gated unit's gradient amax, a single element's, came 24% above
    // the CPU's on an H100 (2026-12-07), so there the ratio may lie between 0.5 and 1.5. A cast
    // at a wrong scale or an amax not kept is off by far more (or leaves the scale at 1).
    const double bound = device_dtype == DType::F32 ? 0.2 : 0.5;
    EXPECT_NEAR(fd[i].scale / fr[i].scale, 1.0, bound)
        << fr[i].name << ": device scale " << fd[i].scale << ", CPU " << fr[i].scale;
  }
}

TEST_P(CudaFp8Model, TenStepsMatchCpu) {
  // Every layer a multiple of 16: 2 blocks x (qkv, out, fc, fc2) and the LM head.
  ten_steps_match_cpu(test::small_decoder(4), GetParam(), 9);
}

// Llama's block (RMSNorm, rotary, grouped-query attention, SwiGLU, no biases): its gated unit
// writes the down projection's x copies and the gate|up projection's dy copies itself, in place
// of the casts (their figures included: every scale must move).
TEST_P(CudaFp8Model, GatedTenStepsMatchCpu) {
  // The 2 blocks' linears and the untied LM head (its 97 rows stored as 128).
  ten_steps_match_cpu(test::lm_family("llama"), GetParam(), 9);
}

}  // namespace
}  // namespace hwt
