#include "analysis/shape_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "report/si_prefix.h"

namespace hwt {
namespace {

std::string pct(double v) {
  return fmt::format("{:+.1f}%", 100 * v);
}

std::string describe_shape(const StepSpec& c) {
  const ModelConfig& m = c.config.model;
  auto stored = [](int64_t width, int64_t padded) {
    return padded != width ? fmt::format(" (stored as {})", padded) : "";
  };
  return fmt::format(
      "hidden {}{}, heads {} (h/a {}{}), ffn {}{}, layers {}, vocab {}{}, batch {} x seq {}",
      m.hidden, stored(m.hidden, m.padded_hidden()), m.heads, m.head_dim(),
      stored(m.head_dim(), m.padded_head_dim()), m.ffn, stored(m.ffn, m.padded_ffn()), m.layers,
      m.vocab_size, stored(m.vocab_size, m.padded_vocab()), c.batch, c.seq);
}

const double* find_time(const MeasuredTimes& m, const GemmCall& g) {
  auto it = m.find(g);
  return it == m.end() ? nullptr : &it->second;
}

nlohmann::json config_json(const StepSpec& c) {
  const ModelConfig& m = c.config.model;
  return {{"hidden", m.hidden},
          {"stored_hidden", m.padded_hidden()},
          {"heads", m.heads},
          {"head_dim", m.head_dim()},
          {"stored_head_dim", m.padded_head_dim()},
          {"ffn", m.ffn},
          {"stored_ffn", m.padded_ffn()},
          {"layers", m.layers},
          {"vocab_size", m.vocab_size},
          {"stored_vocab", m.padded_vocab()},
          {"batch", c.batch},
          {"seq", c.seq}};
}

nlohmann::json totals_json(const GemmTotals& t) {
  nlohmann::json j = {{"flops", t.flops},
                      {"predicted_seconds", t.predicted_seconds},
                      {"predicted_tflops", t.predicted_tflops()}};
  if (t.measured) {
    j["measured_seconds"] = t.measured_seconds;
    j["measured_tflops"] = t.measured_tflops();
  }
  return j;
}

nlohmann::json step_json(const StepPrediction& p, const MeasuredTimes& m) {
  return {{"parameters", p.parameters},
          {"seconds", p.seconds()},
          {"gemm_seconds", p.gemm_seconds},
          {"other_seconds", p.other_seconds},
          {"gemm_flops", p.gemm_flops},
          {"tflops", p.tflops()},
          {"gemms", totals_json(gemm_totals(p, m, false))},
          {"layer_gemms", totals_json(gemm_totals(p, m, true))}};
}

nlohmann::json suggestion_json(const Suggestion& s, const MeasuredTimes& m) {
  return {{"changes", s.changes},           {"config", config_json(s.shape)},
          {"param_change", s.param_change}, {"gain", s.gain},
          {"time_change", s.time_change},   {"step", step_json(s.prediction, m)}};
}

// Measured gain of a suggestion over the original, for all GEMMs of the step and for the
// transformer blocks' alone, when both were measured.
std::string measured_gain_lines(const AdvisorReport& r, const Suggestion& s,
                                const MeasuredTimes& m) {
  std::string out;
  for (bool blocks : {false, true}) {
    const GemmTotals a = gemm_totals(r.current, m, blocks),
                     b = gemm_totals(s.prediction, m, blocks);
    if (!a.measured || !b.measured) continue;
    out += fmt::format(
        "  top suggestion measured, {}: {:.0f} -> {:.0f} TFLOP/s ({}; predicted {}), "
        "{:.2f} -> {:.2f} ms per step\n",
        blocks ? "transformer-block GEMMs" : "all GEMMs", a.measured_tflops(), b.measured_tflops(),
        pct(b.measured_tflops() / a.measured_tflops() - 1),
        pct(b.predicted_tflops() / a.predicted_tflops() - 1), 1e3 * a.measured_seconds,
        1e3 * b.measured_seconds);
  }
  return out;
}

}  // namespace

GemmTotals gemm_totals(const StepPrediction& p, const MeasuredTimes& m, bool blocks_only) {
  GemmTotals t;
  t.measured = true;
  for (const GemmGroupPrediction& g : p.gemms) {
    if (blocks_only && g.gemm.scope.rfind("layers.", 0) != 0) continue;
    const double n = static_cast<double>(g.gemm.count);
    t.flops += g.gemm.flops();
    t.predicted_seconds += g.pred.seconds * n;
    if (const double* s = find_time(m, g.gemm))
      t.measured_seconds += *s * n;
    else
      t.measured = false;
  }
  return t;
}

namespace {

// At fp8: which GEMM groups run in fp8 and why the others stay in bf16 (analysis/fp8_choice.h).
std::string fp8_choice_text(const StepPrediction& p) {
  int64_t groups = 0, in_fp8 = 0;
  double flops = 0, fp8_flops = 0;
  for (const GemmGroupPrediction& g : p.gemms)
    if (g.fp8) {
      ++groups;
      flops += g.gemm.flops();
      if (g.fp8->fp8) ++in_fp8, fp8_flops += g.gemm.flops();
    }
  if (groups == 0) return "";
  std::string s = fmt::format(
      "\nfp8 choice: {} of {} GEMM groups run in fp8 ({:.0f}% of the GEMM FLOPs); the others stay "
      "in bf16\n",
      in_fp8, groups, 100 * fp8_flops / flops);
  for (const GemmGroupPrediction& g : p.gemms)
    if (g.fp8)
      s += fmt::format("  {:<16} {:<7} {:<8} {:<4}  {}\n", g.gemm.scope, role_label(g.gemm.role),
                       phase_name(g.gemm.phase), g.fp8->fp8 ? "fp8" : "bf16", g.fp8->reason);
  return s;
}

}  // namespace

std::string shape_text(const AdvisorReport& r, const ReportContext& ctx) {
  const GemmModel& model = *ctx.model;
  const GpuSpec& gpu = model.gpu();
  const bool measured = !ctx.measured.empty();
  std::string s = fmt::format("hwt shape: {}\n", describe_shape(r.shape));
  s += fmt::format("GPU {} ({}, {} {}, {} peak {:.0f} TFLOP/s); model constants: {}\n", gpu.name,
                   arch_name(gpu.arch), gpu.sms, multiprocessor_name(gpu.arch),
                   precision_name(model.precision()), gpu.peak_tflops(model.precision()),
                   ctx.constants_origin);
  if (!is_nvidia(gpu.arch)) s += fmt::format("note: {}\n", not_measured_note(gpu.arch));
  if (measured) s += fmt::format("measured with cuBLASLt on {}\n", ctx.device);
  s += fmt::format("parameters {}\n\nGEMMs of one training step\n",
                   si_prefixed(static_cast<double>(r.current.parameters)));
  s += fmt::format(
      "{:<16} {:<7} {:<8} {:>7} {:>7} {:>7} {:>5} {:>5} {:>8} {:>5} {:>5} {:>6} {:>9}{} {:>6}\n",
      "scope", "gemm", "phase", "m", "n", "k", "batch", "count", "tile", "waves", "align", "split",
      "TFLOP/s", measured ? fmt::format(" {:>9}", "measured") : "", "share");
  for (const GemmGroupPrediction& g : r.current.gemms) {
    const GemmShape& sh = g.gemm.shape;
    std::string meas;
    if (measured) {
      const double* t = find_time(ctx.measured, g.gemm);
      meas = t ? fmt::format(" {:>9.0f}", sh.flops() / *t / 1e12) : fmt::format(" {:>9}", "-");
    }
    s += fmt::format(
        "{:<16} {:<7} {:<8} {:>7} {:>7} {:>7} {:>5} {:>5} {:>8} {:>4.0f}% {:>4}B {:>6} {:>9.0f}{} "
        "{:>5.1f}%\n",
        g.gemm.scope, role_label(g.gemm.role), phase_name(g.gemm.phase), sh.m, sh.n, sh.k, sh.batch,
        g.gemm.count, fmt::format("{}x{}", g.pred.tile_m, g.pred.tile_n),
        100 * g.pred.wave_efficiency, g.pred.align_bytes, g.pred.split_k, g.pred.tflops, meas,
        100 * g.share);
  }
  s += fmt::format("{:<104}{:>5.1f}%\n", "other ops (memory-bound estimate)",
                   100 * r.current.other_seconds / r.current.seconds());
  const GemmTotals all = gemm_totals(r.current, ctx.measured, false);
  s += fmt::format("predicted step: {:.2f} ms, {:.0f} TFLOP/s over the step (GEMMs alone {:.0f})\n",
                   1e3 * r.current.seconds(), r.current.tflops(), all.predicted_tflops());
  if (all.measured)
    s +=
        fmt::format("measured GEMMs: {:.2f} ms, {:.0f} TFLOP/s (predicted {:.2f} ms)\n",
                    1e3 * all.measured_seconds, all.measured_tflops(), 1e3 * all.predicted_seconds);
  s += fp8_choice_text(r.current);

  s += "\nSizing rules (Anthony et al. 2024)\n";
  if (r.rules.empty()) s += "  none broken\n";
  for (const RuleViolation& v : r.rules)
    s += fmt::format("  {:<7} {:<15} {}\n", severity_name(v.severity), v.rule, v.message);

  s += fmt::format(
      "\nSuggestions: shapes within {:.1f}% of the parameter count predicted faster, by step "
      "TFLOP/s\n",
      100 * ctx.tolerance);
  if (r.suggestions.empty()) s += "  none: no nearby shape is predicted faster\n";
  for (size_t i = 0; i < r.suggestions.size(); ++i) {
    const Suggestion& g = r.suggestions[i];
    s += fmt::format("  {:>2}. {:>7} TFLOP/s, step time {:>7}, parameters {:>6}: {}\n", i + 1,
                     pct(g.gain), pct(g.time_change), pct(g.param_change),
                     fmt::join(g.changes, "; "));
  }
  if (!r.suggestions.empty()) s += measured_gain_lines(r, r.suggestions.front(), ctx.measured);

  s += "\nLarger micro-batch, same shape (activation memory grows with it)\n";
  for (const Suggestion& g : r.microbatch)
    s += fmt::format("  {}: {} TFLOP/s predicted\n", g.changes.front(), pct(g.gain));
  return s;
}

nlohmann::json shape_json(const AdvisorReport& r, const ReportContext& ctx) {
  const GemmModel& model = *ctx.model;
  nlohmann::json gemms = nlohmann::json::array();
  for (const GemmGroupPrediction& g : r.current.gemms) {
    const GemmShape& sh = g.gemm.shape;
    nlohmann::json j = {{"scope", g.gemm.scope},
                        {"gemm", role_label(g.gemm.role)},
                        {"phase", phase_name(g.gemm.phase)},
                        {"m", sh.m},
                        {"n", sh.n},
                        {"k", sh.k},
                        {"batch", sh.batch},
                        {"trans_a", sh.trans_a},
                        {"trans_b", sh.trans_b},
                        {"count", g.gemm.count},
                        {"tile", fmt::format("{}x{}", g.pred.tile_m, g.pred.tile_n)},
                        {"split_k", g.pred.split_k},
                        {"tile_efficiency", g.pred.tile_efficiency},
                        {"wave_efficiency", g.pred.wave_efficiency},
                        {"align_bytes", g.pred.align_bytes},
                        {"memory_bound", g.pred.memory_bound},
                        {"predicted_seconds", g.pred.seconds},
                        {"predicted_tflops", g.pred.tflops},
                        {"share", g.share}};
    if (g.fp8) {
      j["fp8"] = g.fp8->fp8;
      j["fp8_reason"] = g.fp8->reason;
      j["bf16_seconds"] = g.fp8->bf16.seconds;
      j["fp8_gemm_seconds"] = g.fp8->fp8_gemm.seconds;
      j["fp8_cast_seconds"] = g.fp8->cast_seconds;
    }
    if (const double* t = find_time(ctx.measured, g.gemm)) {
      j["measured_seconds"] = *t;
      j["measured_tflops"] = sh.flops() / *t / 1e12;
    }
    gemms.push_back(std::move(j));
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const RuleViolation& v : r.rules)
    rules.push_back(
        {{"rule", v.rule}, {"severity", severity_name(v.severity)}, {"message", v.message}});
  nlohmann::json sugg = nlohmann::json::array(), micro = nlohmann::json::array();
  for (const Suggestion& s : r.suggestions) sugg.push_back(suggestion_json(s, ctx.measured));
  for (const Suggestion& s : r.microbatch) micro.push_back(suggestion_json(s, ctx.measured));
  nlohmann::json out = {{"gpu", model.gpu().name},
                        {"precision", precision_name(model.precision())},
                        {"constants", ctx.constants_origin},
                        {"device", ctx.device},
                        {"tolerance", ctx.tolerance},
                        {"config", config_json(r.shape)},
                        {"step", step_json(r.current, ctx.measured)},
                        {"gemms", gemms},
                        {"rules", rules},
                        {"suggestions", sugg},
                        {"microbatch", micro}};
  if (!is_nvidia(model.gpu().arch)) out["note"] = not_measured_note(model.gpu().arch);
  return out;
}

}  // namespace hwt
