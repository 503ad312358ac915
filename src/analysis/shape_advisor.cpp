#include "analysis/shape_advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/integer_math.h"

namespace hwt {
namespace {

int64_t round_down(int64_t v, int64_t m) {
  return v / m * m;
}

// Hidden sizes to try: the current one and multiples of 64 within the tolerance, nearest first
// (parameters grow about as h², so a relative change of tol in h is already generous).
std::vector<int64_t> hidden_options(int64_t h, double tol) {
  std::vector<int64_t> v = {h};
  const auto lo = static_cast<int64_t>(std::floor(static_cast<double>(h) * (1 - tol)));
  const auto hi = static_cast<int64_t>(std::ceil(static_cast<double>(h) * (1 + tol)));
  for (int64_t x = std::max<int64_t>(64, round_up(lo, 64)); x <= hi; x += 64)
    if (x != h) v.push_back(x);
  std::sort(v.begin() + 1, v.end(),
            [h](int64_t a, int64_t b) { return std::abs(a - h) < std::abs(b - h); });
  if (v.size() > 12) v.resize(12);
  return v;
}

// Head counts for hidden size h2: the current count if it divides, and counts giving head
// sizes of 64, 128 or 256 within a factor two of the current count.
std::vector<int64_t> head_options(int64_t h2, int64_t heads) {
  std::set<int64_t> s;
  if (h2 % heads == 0) s.insert(heads);
  for (int64_t hd : {64, 128, 256})
    if (h2 % hd == 0) {
      const int64_t a = h2 / hd;
      if (2 * a >= heads && a <= 2 * heads) s.insert(a);
    }
  return {s.begin(), s.end()};
}

// FFN widths for hidden size h2: the current ratio to h kept, then rounded to 64 and 128. A
// gated MLP (three GEMMs of width ffn, not two) also tries widths around 8·h2/3, the width that
// keeps its parameters those of a 4h GELU MLP (Shazeer 2020; Llama's multiple_of rounds it to
// 256), rounded to 64, 128 and 256.
std::vector<int64_t> ffn_options(int64_t ffn, int64_t h, int64_t h2, bool gated) {
  std::set<int64_t> s = {ffn};
  auto around = [&](double width, std::initializer_list<int64_t> multiples) {
    const auto w = static_cast<int64_t>(std::llround(width));
    s.insert(w);
    for (int64_t m : multiples) {
      if (round_down(w, m) > 0) s.insert(round_down(w, m));
      s.insert(round_up(w, m));
    }
  };
  around(static_cast<double>(ffn) * static_cast<double>(h2) / static_cast<double>(h), {64, 128});
  if (gated) around(8.0 * static_cast<double>(h2) / 3.0, {64, 128, 256});
  return {s.begin(), s.end()};
}

// K/V heads for `heads` query heads: the current group size kept (0: it does not divide);
// multi-head attention stays so.
int64_t kv_heads_for(const ModelConfig& m, int64_t heads) {
  if (m.kv_heads == 0) return 0;
  const int64_t group = m.heads / m.kv();
  return heads % group == 0 ? heads / group : -1;
}

// Values of model.vocab_multiple to try: the current one, and padding the stored vocabulary to
// a multiple of 64 or 128 rows (an LM's logits GEMMs use it as a leading dimension); one value
// per distinct stored vocabulary.
std::vector<int64_t> vocab_multiple_options(const ModelConfig& m) {
  std::vector<int64_t> out;
  std::set<int64_t> rows;
  for (int64_t k : {m.vocab_multiple, int64_t{64}, int64_t{128}}) {
    ModelConfig c = m;
    c.vocab_multiple = k;
    if (rows.insert(c.padded_vocab()).second) out.push_back(k);
    if (m.head != Task::Lm) break;
  }
  return out;
}

std::vector<std::string> describe(const ModelConfig& a, const ModelConfig& b) {
  std::vector<std::string> c;
  if (a.hidden != b.hidden) c.push_back(fmt::format("hidden {} -> {}", a.hidden, b.hidden));
  if (a.heads != b.heads)
    c.push_back(fmt::format(
        "heads {} -> {}{} (h/a {} -> {})", a.heads, b.heads,
        a.kv() != a.heads ? fmt::format(", kv_heads {} -> {}", a.kv(), b.kv()) : std::string(),
        a.head_dim(), b.head_dim()));
  else if (a.head_dim() != b.head_dim())
    c.push_back(fmt::format("h/a {} -> {} (heads {})", a.head_dim(), b.head_dim(), a.heads));
  if (a.ffn != b.ffn)
    c.push_back(
        fmt::format("ffn {} -> {}{}", a.ffn, b.ffn,
                    b.padded_ffn() != b.ffn ? fmt::format(" (stored as {})", b.padded_ffn()) : ""));
  if (a.padded_vocab() != b.padded_vocab())
    c.push_back(fmt::format("vocab stored as {} -> {} rows (model.vocab_multiple {})",
                            a.padded_vocab(), b.padded_vocab(), b.vocab_multiple));
  return c;
}

Suggestion evaluate(const StepSpec& base, const StepPrediction& base_pred, StepSpec cand,
                    const GemmModel& model) {
  Suggestion s;
  s.prediction = predict_step(trace_at(cand, model.precision()), model);
  s.changes = describe(base.config.model, cand.config.model);
  s.param_change =
      static_cast<double>(s.prediction.parameters) / static_cast<double>(base_pred.parameters) - 1;
  s.gain = s.prediction.tflops() / base_pred.tflops() - 1;
  s.time_change = s.prediction.seconds() / base_pred.seconds() - 1;
  s.shape = std::move(cand);
  return s;
}

}  // namespace

Workload trace_at(StepSpec c, Precision p) {
  c.config.train.precision = p;
  return trace_step(c);
}

StepPrediction predict_step(const Workload& w, const GemmModel& model) {
  StepPrediction p;
  p.parameters = w.parameters;
  std::optional<GemmModel> bf16;
  if (model.precision() == Precision::Fp8 && model.gpu().peak_tflops(Precision::Bf16) > 0)
    bf16.emplace(model.gpu(), Precision::Bf16, model.constants());
  for (const StepGemm& g : step_gemms(w)) {
    GemmGroupPrediction gp{g, model.predict(g.shape), 0, std::nullopt};
    if (bf16) {
      gp.fp8 = choose_fp8(g, model, *bf16);
      gp.pred = gp.fp8->chosen();
    }
    p.gemm_seconds += gp.pred.seconds * static_cast<double>(g.count);
    p.gemm_flops += g.flops();
    p.gemms.push_back(std::move(gp));
  }
  const double bandwidth =
      model.gpu().memory_bandwidth_gbs * 1e9 * model.constants().memory_fraction;
  for (const OpRecord& op : w.ops)
    if (op.kind != OpKind::Gemm && op.kind != OpKind::Attention)
      p.other_seconds += (op.bytes_read + op.bytes_written) / bandwidth;
  for (GemmGroupPrediction& g : p.gemms)
    g.share = g.pred.seconds * static_cast<double>(g.gemm.count) / p.seconds();
  return p;
}

AdvisorReport advise(const StepSpec& c, const GemmModel& model, const AdvisorOptions& o) {
  AdvisorReport r;
  r.shape = c;
  r.current = predict_step(trace_at(c, model.precision()), model);
  r.rules = check_shape_rules(c.config.model, c.batch, c.seq, model.precision(), o.tp);

  const ModelConfig& m = c.config.model;
  for (int64_t h : hidden_options(m.hidden, o.tolerance))
    for (int64_t a : head_options(h, m.heads))
      for (int64_t f : ffn_options(m.ffn, m.hidden, h, m.gated()))
        for (int64_t v : vocab_multiple_options(m)) {
          const int64_t kv = kv_heads_for(m, a);
          if (kv < 0) continue;  // the group size does not divide these heads
          StepSpec cand = c;
          cand.config.model.hidden = h;
          cand.config.model.heads = a;
          cand.config.model.kv_heads = kv;
          cand.config.model.ffn = f;
          cand.config.model.vocab_multiple = v;
          if (describe(m, cand.config.model).empty()) continue;
          Suggestion s = evaluate(c, r.current, std::move(cand), model);
          if (std::abs(s.param_change) <= o.tolerance && s.gain > 0)
            r.suggestions.push_back(std::move(s));
        }
  // Best gain first; within 0.2% prefer the smaller change.
  std::sort(r.suggestions.begin(), r.suggestions.end(),
            [](const Suggestion& a, const Suggestion& b) {
              if (std::abs(a.gain - b.gain) > 0.002) return a.gain > b.gain;
              return a.changes.size() < b.changes.size();
            });
  if (r.suggestions.size() > static_cast<size_t>(o.max_suggestions))
    r.suggestions.resize(static_cast<size_t>(o.max_suggestions));

  for (int64_t factor : {2, 4}) {
    StepSpec cand = c;
    cand.batch = c.batch * factor;
    Suggestion s = evaluate(c, r.current, cand, model);
    s.changes = {fmt::format("micro-batch {} -> {}", c.batch, cand.batch)};
    r.microbatch.push_back(std::move(s));
  }
  return r;
}

}  // namespace hwt
