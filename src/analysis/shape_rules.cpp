#include "analysis/shape_rules.h"

#include <fmt/format.h>

#include <algorithm>

#include "backend/attention_paths.h"
#include "core/integer_math.h"

namespace hwt {
namespace {

class Checker {
 public:
  Checker(Precision p, std::vector<RuleViolation>& out)
      : e16_(16 / precision_bytes(p)), e128_(128 / precision_bytes(p)), out_(out) {}

  // A dimension that reaches GEMMs as a leading dimension: under 16 B is slow, under
  // `multiple` (128 B unless the rule asks more) a warning.
  void aligned(const std::string& rule, const std::string& what, int64_t v, int64_t multiple,
               const std::string& why) {
    multiple = std::max(multiple, e128_);
    if (v % multiple == 0) return;
    const RuleSeverity s = v % e16_ ? RuleSeverity::Slow : RuleSeverity::Warn;
    out_.push_back(
        {rule, s,
         fmt::format(
             "{} = {} is not a multiple of {}{}; {} (nearest: {} or {})", what, v, multiple,
             s == RuleSeverity::Slow ? fmt::format(" nor of {} (16 bytes)", e16_) : std::string(),
             why, v / multiple * multiple, round_up(v, multiple))});
  }

  void divides(const std::string& what, int64_t v, int tp) {
    if (v % tp == 0) return;
    out_.push_back({"tensor_parallel", RuleSeverity::Invalid,
                    fmt::format("{} = {} is not divisible by the tensor-parallel degree t = {}",
                                what, v, tp)});
  }

 private:
  int64_t e16_, e128_;
  std::vector<RuleViolation>& out_;
};

}  // namespace

std::string_view severity_name(RuleSeverity s) {
  switch (s) {
    case RuleSeverity::Invalid:
      return "invalid";
    case RuleSeverity::Slow:
      return "slow";
    case RuleSeverity::Warn:
      return "warn";
  }
  return "?";
}

std::vector<RuleViolation> check_shape_rules(const ModelConfig& m, int64_t batch, int64_t seq,
                                             Precision p, int tp) {
  std::vector<RuleViolation> out;
  Checker c(p, out);
  if (m.head == Task::Lm)
    c.aligned("vocab", "stored vocabulary", m.padded_vocab(), 64,
              "the logits GEMMs and their gradients use it as a leading dimension; set "
              "model.vocab_multiple to 64 or 128 (padding rows cost nothing)");
  // The hidden width and head size as they run: padded when model.hidden_multiple pads them.
  const bool padded = m.padded_hidden() != m.hidden;
  c.aligned("hidden", padded ? "stored hidden width" : "hidden h", m.padded_hidden(), 64,
            "every linear layer's GEMMs use it; cuBLAS tiles and loads want 128-byte rows");
  c.aligned("head_dim", padded ? "stored h/a (head size)" : "h/a (head size)", m.padded_head_dim(),
            64, "it is the K of Q.K^T and the N of P.V; choose heads so that h/a is 64 or 128");
  if (const std::string_view why =
          attention_slow_path(activation_dtype(p), p == Precision::Tf32, m.padded_head_dim());
      !why.empty())
    out.push_back({"attention_kernel", RuleSeverity::Slow,
                   fmt::format("h/a = {} at {}: hwt's CUDA attention runs its generic kernels, "
                               "many times slower than the tensor-core ones, because {}",
                               m.padded_head_dim(), precision_name(p), why)});
  if (m.kv() != m.heads)
    c.aligned("kv", "stored K/V width kv_heads*h/a", m.kv() * m.padded_head_dim(), 64,
              "it is the N of the K and V projections (fused with Q) and of their gradients");
  c.aligned("ffn", m.gated() ? "stored ffn width (of gate and up each)" : "stored ffn width",
            m.padded_ffn(), 64,
            "it is a leading dimension of both MLP GEMMs; set model.ffn_multiple to 64 (the "
            "padding is zero and exact, its FLOPs are spent for nothing)");
  c.aligned("seq", "sequence length s", seq, 64,
            "the attention score matrix is s x s per head; s is its leading dimension");
  const int64_t tokens = batch * seq;
  if (tokens % 64)
    out.push_back({"tokens", RuleSeverity::Warn,
                   fmt::format("b*s = {} tokens is not a multiple of 64: the last row tile of "
                               "every linear GEMM is partly empty",
                               tokens)});
  if (tp > 1) {
    c.divides("hidden h", m.hidden, tp);
    c.divides("heads a", m.heads, tp);
    if (m.kv() != m.heads) c.divides("K/V heads", m.kv(), tp);
    c.divides("stored ffn width", m.padded_ffn(), tp);
    c.divides("b*a (attention batch)", batch * m.heads, tp);
    if (m.head == Task::Lm) c.divides("stored vocabulary", m.padded_vocab(), tp);
  }
  return out;
}

}  // namespace hwt
