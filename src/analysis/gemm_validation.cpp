#include "analysis/gemm_validation.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "analysis/gemm_sweep.h"
#include "report/csv_writer.h"

namespace hwt {
namespace {

struct Case {
  const char* name;
  const char* config;  // in configs/
  int64_t batch, seq;
  std::vector<std::string> sets;
};

}  // namespace

std::vector<NamedCase> validation_cases() {
  static const std::vector<Case> cases = {
      {"gpt2-small", "gpt2_124m", 8, 1024, {"model.vocab_size=50257"}},
      {"gpt2-medium", "gpt2_medium", 8, 1024, {}},
      {"gpt2-large", "gpt2_large", 4, 1024, {}},
      {"gpt2-xl", "gpt2_xl", 2, 1024, {}},
      {"bert-base-128", "bert_base", 32, 128, {}},
      {"bert-base-512", "bert_base", 8, 512, {}},
      {"bert-large", "bert_large", 16, 512, {}},
      {"gpt3-xl", "gpt3_xl", 4, 2048, {}},
      {"gpt3-2.7b", "gpt3_2.7b", 4, 2048, {}},
      {"gpt3-6.7b", "gpt3_6.7b", 2, 2048, {}},
      {"pythia-410m", "pythia_410m", 8, 2048, {}},
      {"pythia-1.4b", "pythia_1.4b", 4, 2048, {}},
      // LLaMA-7B's widths in a GELU MLP: the shapes the validation was measured on.
      {"llama-like-7b", "llama_7b", 2, 2048, {"model.activation=gelu"}},
      {"neox-20b-like", "neox_20b", 1, 2048, {}},
      {"clip-text", "clip_text", 64, 77, {}},
      {"t5-small-like", "t5_small", 32, 512, {}},
      // Poorly shaped variants.
      {"hidden-2600",
       "gpt2_124m",
       8,
       1024,
       {"model.hidden=2600", "model.heads=20", "model.ffn=10400", "model.vocab_size=50257"}},
      {"ffn-10922", "gpt3_6.7b", 2, 2048, {"model.ffn=10922", "model.vocab_size=50304"}},
      {"bert-h1000",
       "bert_base",
       32,
       128,
       {"model.hidden=1000", "model.heads=10", "model.ffn=4000"}},
      {"vocab-32001", "gpt3_xl", 4, 1024, {"model.ffn=5504", "model.vocab_size=32001"}},
  };
  std::vector<NamedCase> out;
  for (const Case& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.push_back("model.layers=1");          // every block has the same GEMMs
    sets.push_back("model.vocab_multiple=1");  // the vocabularies as published, misaligned ones too
    sets.push_back("model.ffn_multiple=1");    // and so the FFN widths
    sets.push_back("model.hidden_multiple=1");  // and the hidden widths
    out.push_back({c.name, step_spec(load_run_config(c.config, sets), c.batch, c.seq)});
  }
  return out;
}

std::vector<ValidationShape> validation_shapes() {
  std::set<GemmShape> seen;
  for (const SweepShape& s : sweep_grid()) seen.insert(s.shape);
  std::vector<ValidationShape> out;
  for (const NamedCase& c : validation_cases())
    for (const StepGemm& g : step_gemms(trace_at(c.shape, Precision::Bf16)))
      if (seen.insert(g.shape).second) out.push_back({c.name, g});
  return out;
}

ValidationResult run_validation(const GemmModel& model, const GemmMeasure& measure) {
  ValidationResult r;
  r.shapes = validation_shapes();
  std::vector<GemmSample> samples;
  for (const ValidationShape& s : r.shapes) {
    r.seconds.push_back(measure(s.gemm));
    if (std::isfinite(r.seconds.back())) samples.push_back({s.gemm.shape, r.seconds.back()});
  }
  r.quality = fit_quality(model, samples);
  return r;
}

std::string validation_csv(const ValidationResult& r, const GemmModel& model) {
  CsvWriter csv({"source", "m", "n", "k", "batch", "trans_a", "trans_b", "align_bytes",
                 "measured_us", "measured_tflops", "predicted_tflops"});
  for (size_t i = 0; i < r.shapes.size(); ++i) {
    const GemmShape& g = r.shapes[i].gemm.shape;
    const GemmPrediction p = model.predict(g);
    csv.values(r.shapes[i].source, g.m, g.n, g.k, g.batch, int(g.trans_a), int(g.trans_b),
               p.align_bytes, fmt::format("{:.2f}", r.seconds[i] * 1e6),
               fmt::format("{:.1f}", g.flops() / r.seconds[i] / 1e12),
               fmt::format("{:.1f}", p.tflops));
  }
  return csv.text();
}

}  // namespace hwt
