// Activation recomputation (train.recompute = "full"): the blocks share one set of intermediate
// activations and each block's forward runs again before its backward. On the CPU, the same
// binary on the same machine, it must give the gradients and weights of the run that keeps every
// activation bit for bit; the memory it saves and the work it adds are checked in the arena and
// the trace.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cli_util.h"
#include "cuda_test_util.h"
#include "model/model.h"
#include "model_test_util.h"
#include "train/optimizer.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

constexpr int64_t kBatch = 3, kSeq = 16;

ModelConfig bert_classifier() {  // post-LN, bidirectional, padded rows, dropout
  ModelConfig m;
  m.vocab_size = 64;
  m.max_seq = 32;
  m.hidden = 64;
  m.heads = 4;
  m.ffn = 128;
  m.layers = 3;
  m.dropout = m.attn_dropout = 0.1;
  m.norm = NormPlacement::Post;
  m.causal = false;
  m.activation = Activation::Gelu;
  m.head = Task::Classify;
  m.num_labels = 3;
  return m;
}

ModelConfig case_config(const std::string& name) {
  if (name == "gpt2_dropout") {
    ModelConfig m = test::small_decoder(2);
    m.layers = 3;
    return m;
  }
  if (name == "bert") return bert_classifier();
  ModelConfig m = test::lm_family(name == "qwen3" ? "qwen2" : name);
  m.layers = 3;
  if (name == "qwen3") m.qk_norm = true;
  return m;
}

struct Trained {
  std::vector<float> losses, grads, weights;
};

// Three AdamW steps on fixed batches (fresh dropout masks each step); the last step's gradients.
Trained train(Backend& be, DType dt, const ModelConfig& cfg, Recompute recompute) {
  Model m(cfg, be, dt);
  m.plan(kBatch, kSeq, 0, recompute);
  m.init_parameters(5);
  OptimConfig oc;
  Optimizer opt(oc, m.params(), 1.0);
  Trained r;
  for (int64_t step = 1; step <= 3; ++step) {
    m.params().zero_grads();
    m.set_batch(test::random_batch(cfg, kBatch, kSeq, 40 + static_cast<uint64_t>(step)));
    m.forward(true, static_cast<uint64_t>(step));
    r.losses.push_back(static_cast<float>(m.losses().mean()));
    m.backward();
    opt.step(step, 1e-3);
  }
  r.grads.resize(static_cast<size_t>(m.params().count()));
  be.download(r.grads.data(), m.params().grads_flat());
  r.weights.resize(r.grads.size());
  be.download(r.weights.data(), m.params().params_flat());
  return r;
}

class Recomputation : public ::testing::TestWithParam<std::string> {};

TEST_P(Recomputation, GivesTheSameGradientsAndWeightsBitForBit) {
  const ModelConfig cfg = case_config(GetParam());
  CpuBackend cpu(2);
  const Trained kept = train(cpu, DType::F32, cfg, Recompute::None),
                again = train(cpu, DType::F32, cfg, Recompute::Full);
  EXPECT_EQ(again.losses, kept.losses);
  EXPECT_EQ(again.grads, kept.grads);
  EXPECT_EQ(again.weights, kept.weights);
}

INSTANTIATE_TEST_SUITE_P(Blocks, Recomputation,
                         ::testing::Values("gpt2_dropout", "bert", "llama", "neox", "qwen3"));

// On the GPU in bf16 too: the recomputed forward runs the same kernels on the same inputs, and
// with deterministic attention (the default) every gradient kernel sums in a fixed order.
TEST(Recompute, OnTheGpuInBf16TheGradientsAreTheSameBitForBit) {
  HWT_REQUIRE_GPU();
  for (const char* name : {"gpt2_dropout", "llama"}) {
    SCOPED_TRACE(name);
    const ModelConfig cfg = case_config(name);
    const auto gpu = test::fresh_gpu();
    const Trained kept = train(*gpu, DType::BF16, cfg, Recompute::None),
                  again = train(*gpu, DType::BF16, cfg, Recompute::Full);
    EXPECT_EQ(again.losses, kept.losses);
    EXPECT_EQ(again.grads, kept.grads);
    EXPECT_EQ(again.weights, kept.weights);
  }
}

// Bytes of the arena's reservations per owner ("layers.2.mlp", "step", ...).
std::map<std::string, size_t> bytes_by_owner(const Model& m) {
  std::map<std::string, size_t> out;
  for (const ActivationArena::Reservation& r : m.arena().reservations()) out[r.owner] += r.bytes;
  return out;
}

TEST(Recompute, BlocksAfterTheFirstKeepOnlyTheirOutput) {
  ModelConfig cfg = test::small_decoder(2);
  cfg.layers = 4;
  CpuBackend cpu(1);
  Model kept(cfg, cpu), shared(cfg, cpu);
  kept.plan(kBatch, kSeq);
  shared.plan(kBatch, kSeq, 0, Recompute::Full);
  const auto k = bytes_by_owner(kept), s = bytes_by_owner(shared);
  const size_t output = static_cast<size_t>(kBatch * kSeq * cfg.hidden) * sizeof(float);
  const size_t block = k.at("layers.0.attn") + k.at("layers.0.mlp");
  for (int i = 1; i < 4; ++i) {
    const std::string layer = "layers." + std::to_string(i);
    EXPECT_EQ(s.at(layer + ".mlp"), output) << layer;
    EXPECT_FALSE(s.contains(layer + ".attn")) << layer;
    EXPECT_EQ(k.at(layer + ".attn") + k.at(layer + ".mlp"), block) << layer;
  }
  EXPECT_EQ(s.at("layers.0.attn") + s.at("layers.0.mlp"), block);
  EXPECT_EQ(kept.activation_bytes() - shared.activation_bytes(), 3 * (block - output));
}

double flops(const Workload& w, Phase phase, const std::string& scope_prefix) {
  double f = 0;
  for (const OpRecord& op : w.ops)
    if (op.phase == phase && op.scope.starts_with(scope_prefix)) f += op.flops;
  return f;
}

// The trace sees the recomputation as backward work: every block's forward once more, but the
// last one's, whose activations are still in the shared slots when the backward reaches it.
TEST(Recompute, TheTraceCountsTheForwardAgainInTheBackward) {
  StepSpec s;
  s.config.model = test::small_decoder(2);
  s.config.model.layers = 4;
  s.batch = kBatch;
  s.seq = kSeq;
  const Workload kept = trace_step(s);
  s.config.train.recompute = Recompute::Full;
  const Workload again = trace_step(s);
  const double block_forward = flops(kept, Phase::Forward, "layers.1.");
  ASSERT_GT(block_forward, 0);
  EXPECT_DOUBLE_EQ(flops(again, Phase::Forward, "layers."), flops(kept, Phase::Forward, "layers."));
  EXPECT_DOUBLE_EQ(flops(again, Phase::Backward, "layers."),
                   flops(kept, Phase::Backward, "layers.") + 3 * block_forward);
  EXPECT_DOUBLE_EQ(flops(again, Phase::Backward, "layers.3."),
                   flops(kept, Phase::Backward, "layers.3."));
}

// A budget the kept activations overflow: hwt memory says whether recomputation fits it.
TEST(Recompute, MemorySaysWhetherRecomputationFitsABudget) {
  const test::TempDir tmp("recompute_budget");
  const auto fits = test::run_hwt("memory --config gpt2_124m --budget 6GB", tmp);
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_NE(fits.out.find("budget 6 GB: does not fit"), std::string::npos) << fits.out;
  EXPECT_NE(fits.out.find("with train.recompute = \"full\": fits"), std::string::npos) << fits.out;
  const auto too_small = test::run_hwt("memory --config gpt2_124m --budget 3GB --json", tmp);
  ASSERT_EQ(too_small.exit_code, 0) << too_small.err;
  const nlohmann::json b = nlohmann::json::parse(too_small.out)["budget"];
  EXPECT_FALSE(b["fits"].get<bool>());
  EXPECT_FALSE(b["recompute_full"]["fits"].get<bool>());
  EXPECT_LT(b["recompute_full"]["needed"].get<double>(), b["needed"].get<double>());
  // Nothing to say where the plan fits, or already recomputes.
  const auto roomy = test::run_hwt("memory --config gpt2_124m --budget 20GB", tmp);
  EXPECT_EQ(roomy.out.find("train.recompute"), std::string::npos) << roomy.out;
}

TEST(Recompute, MemoryReportsTheSavingAndTheKeyIsChecked) {
  const test::TempDir tmp("recompute");
  const auto none = test::run_hwt("memory --config gpt2_124m --json", tmp);
  const auto full =
      test::run_hwt("memory --config gpt2_124m --json --set train.recompute=full", tmp);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  ASSERT_EQ(full.exit_code, 0) << full.err;
  // Activations and intermediates of the rows whose layer starts with `prefix`; "": the total.
  const auto step_bytes = [](const std::string& out, const std::string& prefix) {
    const nlohmann::json plan = nlohmann::json::parse(out)["plan"];
    const auto of = [](const nlohmann::json& row) {
      return row["activations"].get<double>() + row["intermediates"].get<double>();
    };
    if (prefix.empty()) return of(plan["total"]);
    double b = 0;
    for (const nlohmann::json& row : plan["layers"])
      if (row["layer"].get<std::string>().starts_with(prefix)) b += of(row);
    return b;
  };
  // GPT-2 124M: eleven of the twelve blocks keep only their output.
  const double block = step_bytes(none.out, "layers.0."),
               output = step_bytes(full.out, "layers.1.");
  EXPECT_GT(block, 10 * output);
  EXPECT_EQ(step_bytes(none.out, "") - step_bytes(full.out, ""), 11 * (block - output));
  test::expect_one_line_error(
      test::run_hwt("memory --config gpt2_124m --set train.recompute=some", tmp), 2,
      "train.recompute");
}

}  // namespace
}  // namespace hwt
