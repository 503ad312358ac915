// Whole models on the GPU against the CPU backend: a small post-LN encoder with joint heads
// and padding, and a small pre-LN causal LM. Logits, every parameter gradient (dropout on:
// both backends draw the same Philox masks), and ten AdamW / Adan steps, in f32 and bf16.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "model/model.h"
#include "model_test_util.h"
#include "test_util.h"
#include "train/optimizer.h"

namespace hwt {
namespace {

using Vec = std::vector<float>;

ModelConfig encoder() {
  ModelConfig m;
  m.vocab_size = 61;
  m.max_seq = 24;
  m.hidden = 128;
  m.heads = 2;  // head size 64: the tensor-core attention in bf16
  m.ffn = 256;
  m.layers = 2;
  m.dropout = 0.1;
  m.attn_dropout = 0.1;
  m.norm = NormPlacement::Post;
  m.causal = false;
  m.activation = Activation::Gelu;
  m.head = Task::Joint;
  m.num_labels = 3;
  m.num_token_labels = 5;
  return m;
}

// The encoder with every layer kind a tensor train (model.tt).
ModelConfig tt_encoder() {
  ModelConfig m = encoder();
  m.tt.embedding = {{8, 8}, {8, 16}, {6}};
  m.tt.attention = {{8, 16}, {16, 8}, {6, 6, 6}};
  m.tt.ffn = {{8, 16}, {16, 16}, {6, 6, 6}};
  return m;
}

using test::read_floats;

struct Twin {
  CpuBackend cpu{2};
  std::unique_ptr<Model> ref, dev;
  Twin(const ModelConfig& cfg, DType dt, int64_t batch, int64_t seq) {
    ref = std::make_unique<Model>(cfg, cpu, DType::F32);
    dev = std::make_unique<Model>(cfg, test::gpu_ref(), dt);
    for (Model* m : {ref.get(), dev.get()}) {
      m->plan(batch, seq);
      m->init_parameters(7);
    }
  }
};

struct Case {
  const char* name;
  ModelConfig cfg;
  DType dt;
};

class CudaModel : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { HWT_REQUIRE_GPU(); }
  static constexpr int64_t kBatch = 4, kSeq = 20;
  double tol(double f32, double bf16) const { return GetParam().dt == DType::F32 ? f32 : bf16; }
};

TEST_P(CudaModel, LogitsAndEveryGradientMatchCpu) {
  const Case& c = GetParam();
  Twin t(c.cfg, c.dt, kBatch, kSeq);
  const Batch b = test::random_batch(c.cfg, kBatch, kSeq, 11);
  for (Model* m : {t.ref.get(), t.dev.get()}) {
    m->set_batch(b);
    m->forward(false, 0);
  }
  if (has_sequence_labels(c.cfg.head)) {
    EXPECT_LT(test::rel_err(read_floats(test::gpu_ref(), t.dev->seq_logits()),
                            read_floats(t.cpu, t.ref->seq_logits())),
              tol(1e-5, 2e-2))
        << "sequence logits";
  }
  if (has_token_outputs(c.cfg.head)) {
    EXPECT_LT(test::rel_err(read_floats(test::gpu_ref(), t.dev->token_logits()),
                            read_floats(t.cpu, t.ref->token_logits())),
              tol(1e-5, 2e-2))
        << "token logits";
  }
  EXPECT_NEAR(t.dev->losses().mean(), t.ref->losses().mean(), tol(1e-5, 1e-2));

  for (Model* m : {t.ref.get(), t.dev.get()}) {
    m->params().zero_grads();
    m->forward(true, 1234);
    m->backward();
  }
  EXPECT_NEAR(t.dev->losses().mean(), t.ref->losses().mean(), tol(1e-5, 1e-2)) << "dropout loss";
  double worst = 0;
  std::string worst_name;
  for (size_t h = 0; h < t.ref->params().infos().size(); ++h) {
    const ParamInfo& info = t.ref->params().infos()[h];
    const Vec want = read_floats(t.cpu, t.ref->params().grad(h));
    const Vec got = read_floats(test::gpu_ref(), t.dev->params().grad(h));
    double norm = 0;
    for (float v : want) norm += static_cast<double>(v) * v;
    if (norm == 0) {  // e.g. embedding rows no token used
      EXPECT_EQ(got, want) << info.name;
      continue;
    }
    const double e = test::rel_err(got, want);
    EXPECT_LT(e, tol(1e-4, 5e-2)) << info.name;
    if (e > worst) worst = e, worst_name = info.name;
  }
  std::printf("[ %s ] worst gradient relative error %.3g (%s)\n", c.name, worst,
              worst_name.c_str());
  EXPECT_LT(test::rel_err(read_floats(test::gpu_ref(), t.dev->params().grads_flat()),
                          read_floats(t.cpu, t.ref->params().grads_flat())),
            tol(2e-5, 2e-2))
      << "all gradients";
}

TEST_P(CudaModel, TenOptimizerStepsMatchCpu) {
  const Case& c = GetParam();
  for (OptimizerKind kind : {OptimizerKind::AdamW, OptimizerKind::Adan}) {
    SCOPED_TRACE(kind == OptimizerKind::AdamW ? "adamw" : "adan");
    Twin t(c.cfg, c.dt, kBatch, kSeq);
    OptimConfig oc;
    oc.name = kind;
    oc.weight_decay = 0.01;
    Optimizer ref_opt(oc, t.ref->params(), 1.0), dev_opt(oc, t.dev->params(), 1.0);
    Vec ref_loss, dev_loss;
    for (int64_t step = 1; step <= 10; ++step) {
      // One fixed batch (fresh dropout masks each step): the model can fit it, so the loss
      // falls; the comparison itself holds for any data.
      const Batch b = test::random_batch(c.cfg, kBatch, kSeq, 100);
      auto run = [&](Model& m, Optimizer& opt, Vec& losses) {
        m.params().zero_grads();
        m.set_batch(b);
        m.forward(true, static_cast<uint64_t>(step));
        losses.push_back(static_cast<float>(m.losses().mean()));
        m.backward();
        opt.step(step, 1e-3);
      };
      run(*t.ref, ref_opt, ref_loss);
      run(*t.dev, dev_opt, dev_loss);
    }
    EXPECT_LT(test::rel_err(dev_loss, ref_loss), tol(1e-5, 1e-2)) << "loss trajectory";
    EXPECT_LT(ref_loss.back(), ref_loss.front()) << "the reference run should learn";
    const double e = test::rel_err(read_floats(test::gpu_ref(), t.dev->params().params_flat()),
                                   read_floats(t.cpu, t.ref->params().params_flat()));
    std::printf("[ %s ] %s: params after 10 steps, relative error %.3g; loss %.4f -> %.4f\n",
                c.name, kind == OptimizerKind::AdamW ? "adamw" : "adan", e, dev_loss.front(),
                dev_loss.back());
    EXPECT_LT(e, tol(1e-5, 1e-2)) << "parameters after 10 steps";
  }
}

// The decoders have 4 heads of 32: the generic attention kernels (the encoder's 64 take the
// tensor-core ones in bf16).
INSTANTIATE_TEST_SUITE_P(Models, CudaModel,
                         ::testing::Values(Case{"encoder_f32", encoder(), DType::F32},
                                           Case{"encoder_bf16", encoder(), DType::BF16},
                                           Case{"decoder_f32", test::small_decoder(4), DType::F32},
                                           Case{"decoder_bf16", test::small_decoder(4),
                                                DType::BF16},
                                           Case{"tt_encoder_f32", tt_encoder(), DType::F32},
                                           Case{"tt_encoder_bf16", tt_encoder(), DType::BF16}),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace hwt
