// The traced workload against published formulas: parameter counts and GEMM FLOPs
// (Anthony et al. / Megatron: 24·b·s·h² + 4·b·s²·h per layer forward; training = 3x forward).
#include <gtest/gtest.h>

#include <set>

#include "backend/trace/trace_backend.h"
#include "config/run_config.h"
#include "model/model.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

// GPT-2 small as published: the preset with its own, unpadded vocabulary.
ModelConfig gpt2_small() {
  return load_run_config("gpt2_124m", {"model.vocab_size=50257"}).model;
}

TEST(ModelParams, Gpt2SmallHas124439808Parameters) {
  TraceBackend be;
  Model model(gpt2_small(), be);
  // V·h + S·h + L·(12h² + 13h) + 2h, the published GPT-2 124M count (tied LM head).
  EXPECT_EQ(model.params().parameters(), 124439808);
}

TEST(ModelParams, BertBaseEncoderCountMatchesFormula) {
  TraceBackend be;
  Model model(load_run_config("bert_base", {}).model, be);
  const int64_t h = 768, V = 30522, S = 512, L = 12;
  // Embeddings + embedding LN + blocks + classifier (no token-type embeddings or pooler here).
  EXPECT_EQ(model.params().parameters(),
            V * h + S * h + 2 * h + L * (12 * h * h + 13 * h) + h * 2 + 2);
}

TEST(ModelParams, DecayedParametersComeFirst) {
  TraceBackend be;
  ModelConfig m = gpt2_small();
  m.layers = 2;
  Model model(m, be);
  for (const ParamInfo& p : model.params().infos())
    EXPECT_EQ(p.decay, p.offset < model.params().n_decay()) << p.name;
}

class TraceFlops : public ::testing::TestWithParam<NormPlacement> {};

TEST_P(TraceFlops, GemmFlopsMatchPublishedFormula) {
  const int64_t b = 2, s = 64, h = 128, L = 3, V = 1000;
  StepSpec r;
  r.config.model.vocab_size = V;
  r.config.model.vocab_multiple = 1;  // the formula's V
  r.config.model.max_seq = s;
  r.config.model.hidden = h;
  r.config.model.heads = 4;
  r.config.model.ffn = 4 * h;
  r.config.model.layers = L;
  r.config.model.norm = GetParam();
  r.config.model.causal = true;
  r.config.model.head = Task::Lm;
  r.batch = b;
  r.seq = s;
  const Workload w = trace_step(r);
  double layer_fwd = 0, layer_bwd = 0;
  for (const OpRecord& op : w.ops)
    if (op.scope.rfind("layers.", 0) == 0)
      (op.phase == Phase::Forward ? layer_fwd : layer_bwd) += op.gemm_flops();
  const double bd = static_cast<double>(b), sd = static_cast<double>(s),
               hd = static_cast<double>(h);
  const double per_layer = 24 * bd * sd * hd * hd + 4 * bd * sd * sd * hd;
  EXPECT_DOUBLE_EQ(layer_fwd, L * per_layer);
  EXPECT_DOUBLE_EQ(layer_bwd, 2 * L * per_layer);
  const double logits = 2 * bd * sd * hd * static_cast<double>(V);
  EXPECT_DOUBLE_EQ(w.gemm_flops(Phase::Forward), L * per_layer + logits);
  EXPECT_DOUBLE_EQ(w.gemm_flops(Phase::Forward) + w.gemm_flops(Phase::Backward),
                   3 * w.gemm_flops(Phase::Forward));
}

INSTANTIATE_TEST_SUITE_P(Norms, TraceFlops,
                         ::testing::Values(NormPlacement::Pre, NormPlacement::Post));

// An FFN width of 37 runs stored as 40 (model.ffn_multiple 8): the trace shows the MLP GEMMs as
// they run, at 40, while the parameter count stays that of width 37.
TEST(Trace, FfnGemmsRunAtTheStoredWidth) {
  StepSpec r;
  r.config.model.vocab_size = 500;
  r.config.model.max_seq = 32;
  r.config.model.hidden = 64;
  r.config.model.ffn = 37;
  r.config.model.num_labels = 2;
  r.batch = 4;
  r.seq = 32;
  auto mlp_dims = [](const Workload& w) {
    std::set<int64_t> dims;
    for (const OpRecord& op : w.ops)
      if (op.scope.ends_with(".mlp"))
        for (const GemmCall& g : op.gemms) dims.insert({g.shape.m, g.shape.n, g.shape.k});
    return dims;
  };
  const Workload padded = trace_step(r);
  r.config.model.ffn_multiple = 1;
  const Workload unpadded = trace_step(r);
  EXPECT_EQ(padded.parameters, unpadded.parameters);
  EXPECT_TRUE(mlp_dims(padded).contains(40));
  EXPECT_FALSE(mlp_dims(padded).contains(37));
  EXPECT_TRUE(mlp_dims(unpadded).contains(37));
}

// Hidden 42 in 6 heads of 7 runs stored as 48 in heads of 8 (model.hidden_multiple 8): every
// GEMM of a block and of the classifier runs at the stored widths (q|k|v 3 x 48 wide), the layer
// norms normalise over 42, and the parameter count stays that of width 42.
TEST(Trace, HiddenGemmsRunAtTheStoredWidth) {
  StepSpec r;
  r.config.model.vocab_size = 500;
  r.config.model.max_seq = 32;
  r.config.model.hidden = 42;
  r.config.model.heads = 6;
  r.config.model.ffn = 64;
  r.config.model.num_labels = 2;
  r.batch = 4;
  r.seq = 32;
  auto gemm_dims = [](const Workload& w) {
    std::set<int64_t> dims;
    for (const OpRecord& op : w.ops)
      if (op.scope.starts_with("layers."))
        for (const GemmCall& g : op.gemms) dims.insert({g.shape.m, g.shape.n, g.shape.k});
    return dims;
  };
  auto norm_details = [](const Workload& w) {
    std::set<std::string> details;
    for (const OpRecord& op : w.ops)
      if (op.kind == OpKind::Norm) details.insert(op.detail);
    return details;
  };
  const Workload padded = trace_step(r);
  r.config.model.hidden_multiple = 1;
  const Workload unpadded = trace_step(r);
  EXPECT_EQ(padded.parameters, unpadded.parameters);
  EXPECT_TRUE(gemm_dims(padded).contains(48));
  EXPECT_TRUE(gemm_dims(padded).contains(3 * 48));
  EXPECT_FALSE(gemm_dims(padded).contains(42));
  EXPECT_TRUE(gemm_dims(unpadded).contains(42));
  EXPECT_TRUE(norm_details(padded).contains("[128, 48] width=42"));
  for (const std::string& d : norm_details(unpadded))
    EXPECT_EQ(d.find("width="), std::string::npos) << d;
}

TEST(Trace, RecordsEveryPhaseScopeAndTheOptimizer) {
  StepSpec r;
  r.config.model.vocab_size = 500;
  r.config.model.vocab_multiple = 1;  // every stored parameter is a parameter
  r.config.model.max_seq = 32;
  r.config.model.hidden = 64;
  r.config.model.heads = 4;
  r.config.model.ffn = 128;
  r.config.model.layers = 2;
  r.config.model.head = Task::Joint;
  r.config.model.norm = NormPlacement::Post;
  r.config.model.num_labels = 5;
  r.config.model.num_token_labels = 9;
  r.batch = 4;
  r.seq = 32;
  r.config.optim.name = OptimizerKind::Adan;
  const Workload w = trace_step(r);
  std::set<std::string> scopes;
  int optimizer_ops = 0;
  for (const OpRecord& op : w.ops) {
    scopes.insert(op.scope);
    EXPECT_GE(op.flops, 0);
    EXPECT_GT(op.bytes_read + op.bytes_written, 0) << op_name(op.op) << " " << op.scope;
    if (op.kind == OpKind::Optimizer) {
      ++optimizer_ops;
      EXPECT_EQ(op.params, w.parameters);
      EXPECT_EQ(op.op, Op::adan_step);
    }
  }
  EXPECT_EQ(optimizer_ops, 1);
  for (const char* s :
       {"embed", "layers.0.attn", "layers.1.mlp", "head.classifier", "head.tokens", "optimizer"})
    EXPECT_TRUE(scopes.count(s)) << s;
  EXPECT_GT(w.flops(Phase::Backward), w.flops(Phase::Forward));

  r.mode = TraceMode::Infer;
  const Workload inf = trace_step(r);
  for (const OpRecord& op : inf.ops) EXPECT_EQ(op.phase, Phase::Forward) << op_name(op.op);
}

}  // namespace
}  // namespace hwt
