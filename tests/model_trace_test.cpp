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

// The modern block counted by hand: grouped-query Q/K/V widths, the gated MLP's three GEMMs,
// norms without beta, biases on Q/K/V only (Qwen2) or everywhere (NeoX, parallel residual),
// QK-norm's two gammas of a head's size (Qwen3).
struct ModernCase {
  const char* name;
  int64_t kv_heads;
  Activation act;
  NormKind norm;
  bool bias, qkv_bias, parallel, qk_norm = false;
};

class TraceModernBlock : public ::testing::TestWithParam<ModernCase> {};

TEST_P(TraceModernBlock, ParametersAndGemmFlopsMatchHandCount) {
  const ModernCase k = GetParam();
  const int64_t b = 2, s = 64, h = 128, a = 4, hd = h / a, f = 352, L = 2, V = 1000;
  StepSpec r;
  ModelConfig& m = r.config.model;
  m.vocab_size = V;
  m.vocab_multiple = 1;
  m.max_seq = s;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = k.kv_heads;
  m.ffn = f;
  m.layers = L;
  m.causal = true;
  m.head = Task::Lm;
  m.tie_embeddings = false;
  m.position = Position::Rope;
  m.norm_kind = k.norm;
  m.activation = k.act;
  m.bias = k.bias;
  m.qkv_bias = k.qkv_bias;
  m.parallel_residual = k.parallel;
  m.qk_norm = k.qk_norm;
  r.batch = b;
  r.seq = s;
  const Workload w = trace_step(r);

  const int64_t kv = k.kv_heads > 0 ? k.kv_heads : a, qkv = h + 2 * kv * hd;
  const int64_t mlp_mats = is_gated(k.act) ? 3 : 2, fc1 = is_gated(k.act) ? 2 * f : f;
  const int64_t norm = k.norm == NormKind::RmsNorm ? h : 2 * h;
  const int64_t biases = k.bias ? qkv + h + fc1 + h : k.qkv_bias ? qkv : 0;
  const int64_t qk_norm = k.qk_norm ? 2 * hd : 0;
  const int64_t per_layer = 2 * norm + qk_norm + h * qkv + h * h + mlp_mats * h * f + biases;
  EXPECT_EQ(w.parameters, V * h + L * per_layer + norm + V * h);  // no position table

  double layer_fwd = 0, layer_bwd = 0;
  int rope_ops = 0, rotary_backwards = 0, glu_ops = 0, head_norms = 0;
  for (const OpRecord& op : w.ops) {
    if (op.scope.rfind("layers.", 0) == 0)
      (op.phase == Phase::Forward ? layer_fwd : layer_bwd) += op.gemm_flops();
    rope_ops += op.op == Op::rope_forward || op.op == Op::rope_backward;
    rotary_backwards +=
        op.op == Op::attention_backward && op.detail.find("rotary_dim=") != std::string::npos;
    glu_ops += op.op == Op::glu_forward || op.op == Op::glu_backward;
    head_norms += op.op == Op::head_norm_forward || op.op == Op::head_norm_backward;
  }
  const double bs = static_cast<double>(b * s);
  const double gemms = 2 * bs * static_cast<double>(h * qkv + h * h + mlp_mats * h * f);
  const double attention = 4 * bs * static_cast<double>(s * h);  // QKᵀ and PV, every query head
  EXPECT_DOUBLE_EQ(layer_fwd, static_cast<double>(L) * (gemms + attention));
  EXPECT_DOUBLE_EQ(layer_bwd, 2 * static_cast<double>(L) * (gemms + attention));
  // q and k turned forward by a pass of their own; their gradients turned back inside the
  // attention backward.
  EXPECT_EQ(rope_ops, L);
  EXPECT_EQ(rotary_backwards, L);
  EXPECT_EQ(glu_ops, is_gated(k.act) ? 2 * L : 0);
  EXPECT_EQ(head_norms, k.qk_norm ? 2 * L : 0);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, TraceModernBlock,
    ::testing::Values(
        ModernCase{"llama", 2, Activation::SwiGlu, NormKind::RmsNorm, false, false, false},
        ModernCase{"qwen2", 1, Activation::SwiGlu, NormKind::RmsNorm, false, true, false},
        ModernCase{"gemma", 4, Activation::GeGlu, NormKind::RmsNorm, false, false, false},
        ModernCase{"qwen3", 2, Activation::SwiGlu, NormKind::RmsNorm, false, false, false, true},
        ModernCase{"neox", 0, Activation::Gelu, NormKind::LayerNorm, true, false, true}),
    [](const auto& kind) { return std::string(kind.param.name); });

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
