#include "analysis/gemm_validation.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "analysis/gemm_sweep.h"

namespace hwt {
namespace {

// One block is enough: every block has the same GEMMs.
NamedCase config(const std::string& name, int64_t h, int64_t heads, int64_t ffn, int64_t vocab,
                 int64_t batch, int64_t seq, bool lm = true) {
  ShapeCase c;
  c.model.hidden = h;
  c.model.heads = heads;
  c.model.ffn = ffn;
  c.model.layers = 1;
  c.model.vocab_size = vocab;
  c.model.max_seq = seq;
  c.model.causal = lm;
  c.model.head = lm ? Task::Lm : Task::Classify;
  c.model.num_labels = 2;
  c.batch = batch;
  c.seq = seq;
  return {name, c};
}

}  // namespace

std::vector<NamedCase> validation_cases() {
  return {
      config("gpt2-small", 768, 12, 3072, 50257, 8, 1024),
      config("gpt2-medium", 1024, 16, 4096, 50257, 8, 1024),
      config("gpt2-large", 1280, 20, 5120, 50257, 4, 1024),
      config("gpt2-xl", 1600, 25, 6400, 50257, 2, 1024),
      config("bert-base-128", 768, 12, 3072, 30522, 32, 128, false),
      config("bert-base-512", 768, 12, 3072, 30522, 8, 512, false),
      config("bert-large", 1024, 16, 4096, 30522, 16, 512, false),
      config("gpt3-xl", 2048, 16, 8192, 50257, 4, 2048),
      config("gpt3-2.7b", 2560, 32, 10240, 50257, 4, 2048),
      config("gpt3-6.7b", 4096, 32, 16384, 50257, 2, 2048),
      config("pythia-410m", 1024, 16, 4096, 50304, 8, 2048),
      config("pythia-1.4b", 2048, 16, 8192, 50304, 4, 2048),
      config("llama-like-7b", 4096, 32, 11008, 32000, 2, 2048),
      config("neox-20b-like", 6144, 64, 24576, 50432, 1, 2048),
      config("clip-text", 512, 8, 2048, 49408, 64, 77),
      config("t5-small-like", 512, 8, 2048, 32128, 32, 512),
      config("hidden-2600", 2600, 20, 10400, 50257, 8, 1024),
      config("ffn-10922", 4096, 32, 10922, 50304, 2, 2048),
      config("bert-h1000", 1000, 10, 4000, 30522, 32, 128, false),
      config("vocab-32001", 2048, 16, 5504, 32001, 4, 1024),
  };
}

std::vector<ValidationShape> validation_shapes() {
  std::set<GemmShape> seen;
  for (const SweepShape& s : sweep_grid()) seen.insert(s.shape);
  std::vector<ValidationShape> out;
  for (const NamedCase& c : validation_cases())
    for (const StepGemm& g : step_gemms(trace_case(c.shape, Precision::Bf16)))
      if (seen.insert(g.shape).second) out.push_back({c.name, g.shape});
  return out;
}

ValidationResult run_validation(const GemmModel& model, const GemmMeasure& measure) {
  ValidationResult r;
  r.shapes = validation_shapes();
  std::vector<GemmSample> samples;
  for (const ValidationShape& s : r.shapes) {
    r.seconds.push_back(measure(s.shape));
    if (std::isfinite(r.seconds.back())) samples.push_back({s.shape, r.seconds.back()});
  }
  r.quality = fit_quality(model, samples);
  return r;
}

std::string validation_csv(const ValidationResult& r, const GemmModel& model) {
  std::string s =
      "source,m,n,k,batch,trans_a,trans_b,align_bytes,measured_us,measured_tflops,"
      "predicted_tflops\n";
  for (size_t i = 0; i < r.shapes.size(); ++i) {
    const GemmShape& g = r.shapes[i].shape;
    const GemmPrediction p = model.predict(g);
    s += fmt::format("{},{},{},{},{},{},{},{},{:.2f},{:.1f},{:.1f}\n", r.shapes[i].source, g.m, g.n,
                     g.k, g.batch, int(g.trans_a), int(g.trans_b), p.align_bytes,
                     r.seconds[i] * 1e6, g.flops() / r.seconds[i] / 1e12, p.tflops);
  }
  return s;
}

}  // namespace hwt
