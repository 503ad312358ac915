// Activation recomputation (train.recompute = "norm_act", "attention", "full"): the blocks share
// the first block's slots for what the mode recomputes, and the backward rewrites them for each
// block before its gradients. On the CPU, the same binary on the same machine, every mode must
// give the gradients and weights of the run that keeps every activation bit for bit; the memory
// each saves and the work each adds are checked in the arena and the trace.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
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

constexpr Recompute kModes[] = {Recompute::NormAct, Recompute::Attention, Recompute::Full};

class Recomputation : public ::testing::TestWithParam<std::tuple<std::string, Recompute>> {};

TEST_P(Recomputation, GivesTheSameGradientsAndWeightsBitForBit) {
  const auto& [name, mode] = GetParam();
  const ModelConfig cfg = case_config(name);
  CpuBackend cpu(2);
  const Trained kept = train(cpu, DType::F32, cfg, Recompute::None),
                again = train(cpu, DType::F32, cfg, mode);
  EXPECT_EQ(again.losses, kept.losses);
  EXPECT_EQ(again.grads, kept.grads);
  EXPECT_EQ(again.weights, kept.weights);
}

INSTANTIATE_TEST_SUITE_P(Blocks, Recomputation,
                         ::testing::Combine(::testing::Values("gpt2_dropout", "bert", "llama",
                                                              "neox", "qwen3"),
                                            ::testing::ValuesIn(kModes)),
                         [](const auto& test) {
                           return std::get<0>(test.param) + "_" +
                                  std::string(recompute_name(std::get<1>(test.param)));
                         });

// On the GPU in bf16 too: the recomputed ops are the forward's kernels on the same inputs (the
// fused residual-and-norm kernel normalises its stored sum, as the plain norm does), and with
// deterministic attention (the default) every gradient kernel sums in a fixed order.
TEST(Recompute, OnTheGpuInBf16TheGradientsAreTheSameBitForBit) {
  HWT_REQUIRE_GPU();
  for (const char* name : {"gpt2_dropout", "llama", "bert"}) {
    const ModelConfig cfg = case_config(name);
    const auto gpu = test::fresh_gpu();
    const Trained kept = train(*gpu, DType::BF16, cfg, Recompute::None);
    for (Recompute mode : kModes) {
      SCOPED_TRACE(std::string(name) + " " + std::string(recompute_name(mode)));
      const Trained again = train(*gpu, DType::BF16, cfg, mode);
      EXPECT_EQ(again.losses, kept.losses);
      EXPECT_EQ(again.grads, kept.grads);
      EXPECT_EQ(again.weights, kept.weights);
    }
  }
}

// Bytes of the arena's reservations per owner ("layers.2.mlp", "step", ...).
std::map<std::string, size_t> bytes_by_owner(const Model& m) {
  std::map<std::string, size_t> out;
  for (const ActivationArena::Reservation& r : m.arena().reservations()) out[r.owner] += r.bytes;
  return out;
}

// Per row of a GPT-2-like block (pre-LN, ungated), in floats, what each mode stops keeping in
// blocks 1 to L-1: norm_act the LN1 and LN2 outputs and statistics, the MLP's pre-activation and
// activation and the block's scratch; attention also q|k|v, the context and the log-sum-exp;
// full everything but the block's output.
TEST(Recompute, EachModeKeepsLessInTheBlocksAfterTheFirst) {
  ModelConfig cfg = test::small_decoder(2);
  cfg.layers = 4;
  const int64_t h = cfg.hidden, ffn = cfg.ffn, rows = kBatch * kSeq;
  CpuBackend cpu(1);
  Model kept(cfg, cpu);
  kept.plan(kBatch, kSeq);
  const auto k = bytes_by_owner(kept);
  const size_t block = k.at("layers.0.attn") + k.at("layers.0.mlp");
  const size_t output = static_cast<size_t>(rows * h) * sizeof(float);
  // Bytes of slots of `per_row` floats per row, each slot laid out at the arena's 256 bytes.
  const auto slots = [&](int64_t count, int64_t per_row) {
    const size_t bytes = static_cast<size_t>(rows * per_row) * sizeof(float);
    return static_cast<size_t>(count) * ((bytes + 255) / 256 * 256);
  };
  const size_t norm_act = slots(3, h) + slots(2, ffn) + slots(4, 1);
  const std::map<Recompute, size_t> saved = {
      {Recompute::NormAct, norm_act},
      {Recompute::Attention, norm_act + slots(1, 3 * h) + slots(1, h) + slots(1, cfg.heads)},
      {Recompute::Full, block - output}};
  for (const auto& [mode, saving] : saved) {
    SCOPED_TRACE(std::string(recompute_name(mode)));
    Model shared(cfg, cpu);
    shared.plan(kBatch, kSeq, 0, mode);
    const auto s = bytes_by_owner(shared);
    const auto of = [&](const std::string& layer) {
      return (s.contains(layer + ".attn") ? s.at(layer + ".attn") : 0) + s.at(layer + ".mlp");
    };
    EXPECT_EQ(of("layers.0"), block);
    for (int i = 1; i < 4; ++i) EXPECT_EQ(of("layers." + std::to_string(i)), block - saving) << i;
    EXPECT_EQ(kept.activation_bytes() - shared.activation_bytes(), 3 * saving);
    if (mode == Recompute::Full) {
      EXPECT_FALSE(s.contains("layers.1.attn"));
    }
  }
}

double flops(const Workload& w, Phase phase, const std::string& scope_prefix) {
  double f = 0;
  for (const OpRecord& op : w.ops)
    if (op.phase == phase && op.scope.starts_with(scope_prefix)) f += op.flops;
  return f;
}

// The trace sees the recomputation as backward work: for every block but the last (whose
// activations are still in the shared slots when the backward reaches it), full runs the block's
// forward once more; norm_act its norms and activation, which for an ungated MLP is the first
// GEMM's epilogue (that GEMM runs again) and for a gated one elementwise work; attention also the
// q|k|v GEMM and the attention.
TEST(Recompute, TheTraceCountsTheRecomputedWorkInTheBackward) {
  for (const char* name : {"gpt2_dropout", "llama"}) {
    SCOPED_TRACE(name);
    StepSpec s;
    s.config.model = case_config(name);
    s.config.model.layers = 4;
    s.batch = kBatch;
    s.seq = kSeq;
    const Workload kept = trace_step(s);
    const double block_forward = flops(kept, Phase::Forward, "layers.1.");
    const double backward = flops(kept, Phase::Backward, "layers.");
    ASSERT_GT(block_forward, 0);
    const ModelConfig& m = s.config.model;
    const double rows = kBatch * kSeq, fc1 = 2 * rows * m.hidden * m.ffn,
                 qkv = 2 * rows * m.hidden * (m.hidden + 2 * m.kv() * m.head_dim());
    std::map<Recompute, double> added;
    for (Recompute mode : kModes) {
      s.config.train.recompute = mode;
      const Workload again = trace_step(s);
      EXPECT_DOUBLE_EQ(flops(again, Phase::Forward, "layers."),
                       flops(kept, Phase::Forward, "layers."));
      EXPECT_DOUBLE_EQ(flops(again, Phase::Backward, "layers.3."),
                       flops(kept, Phase::Backward, "layers.3."));
      added[mode] = flops(again, Phase::Backward, "layers.") - backward;
    }
    EXPECT_DOUBLE_EQ(added[Recompute::Full], 3 * block_forward);
    EXPECT_LT(added[Recompute::NormAct], added[Recompute::Attention]);
    EXPECT_LT(added[Recompute::Attention], added[Recompute::Full]);
    EXPECT_GE(added[Recompute::Attention] - added[Recompute::NormAct], 3 * qkv);
    if (m.gated()) {  // two norms and the gating: elementwise, far under a GEMM's 2·hidden
      EXPECT_LT(added[Recompute::NormAct], 3 * rows * (2 * m.hidden + m.ffn) * 16.0);
    } else {
      EXPECT_GE(added[Recompute::NormAct], 3 * fc1);
    }
  }
}

// A budget the kept activations overflow: hwt memory names the least recomputation that fits it.
// GPT-2 124M at 16 x 1024 in bf16 plans 9.36 GB kept, 6.31 GB norm_act, 5.20 GB attention,
// 4.92 GB full.
TEST(Recompute, MemoryNamesTheLeastRecomputationThatFitsABudget) {
  const test::TempDir tmp("recompute_budget");
  for (const auto& [gb, mode] :
       {std::pair{"6.5", "norm_act"}, std::pair{"6", "attention"}, std::pair{"5", "full"}}) {
    const auto r =
        test::run_hwt(std::string("memory --config gpt2_124m --budget ") + gb + "GB", tmp);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("budget ") + gb + " GB: does not fit"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(std::string("with train.recompute = \"") + mode + "\": fits"),
              std::string::npos)
        << r.out;
  }
  // Past the configured mode only.
  const auto past =
      test::run_hwt("memory --config gpt2_124m --budget 5GB --set train.recompute=attention", tmp);
  EXPECT_NE(past.out.find("with train.recompute = \"full\": fits"), std::string::npos) << past.out;
  const auto too_small = test::run_hwt("memory --config gpt2_124m --budget 3GB --json", tmp);
  ASSERT_EQ(too_small.exit_code, 0) << too_small.err;
  const nlohmann::json b = nlohmann::json::parse(too_small.out)["budget"];
  EXPECT_FALSE(b["fits"].get<bool>());
  EXPECT_EQ(b["recompute"]["mode"], "full");
  EXPECT_FALSE(b["recompute"]["fits"].get<bool>());
  EXPECT_LT(b["recompute"]["needed"].get<double>(), b["needed"].get<double>());
  // Nothing to say where the plan fits, or already recomputes everything.
  const auto roomy = test::run_hwt("memory --config gpt2_124m --budget 20GB", tmp);
  EXPECT_EQ(roomy.out.find("train.recompute"), std::string::npos) << roomy.out;
  const auto full =
      test::run_hwt("memory --config gpt2_124m --budget 3GB --set train.recompute=full", tmp);
  EXPECT_EQ(full.out.find("with train.recompute"), std::string::npos) << full.out;
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
