// The shape advisor (Anthony et al. 2024): predicts every GEMM of a traced training step on a
// GPU, checks the sizing rules, and searches nearby model shapes (hidden, heads, FFN width,
// vocabulary padding) within a parameter-count tolerance for ones predicted to run faster.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fp8_choice.h"
#include "analysis/gemm_model.h"
#include "analysis/shape_rules.h"
#include "analysis/step_gemms.h"
#include "workload/trace_step.h"

namespace hwt {

// The step of `c` with its GEMMs in precision p (train.precision set to p), as trace_step
// records it.
Workload trace_at(StepSpec c, Precision p);

struct GemmGroupPrediction {
  StepGemm gemm;
  GemmPrediction pred;           // in fp8, of the form chosen (fp8 below)
  double share = 0;              // of the predicted step time
  std::optional<Fp8Choice> fp8;  // at Precision::Fp8: fp8 or bf16, and why
};

struct StepPrediction {
  std::vector<GemmGroupPrediction> gemms;
  double gemm_seconds = 0;
  double other_seconds = 0;  // non-GEMM ops at the memory roofline
  double gemm_flops = 0;
  int64_t parameters = 0;

  double seconds() const { return gemm_seconds + other_seconds; }
  // GEMM FLOPs over the whole step's time: the model FLOP rate shapes are ranked by.
  double tflops() const { return gemm_flops / seconds() / 1e12; }
};

// At Precision::Fp8 each GEMM group runs in fp8 or stays in bf16 (analysis/fp8_choice.h), priced
// as chosen.
StepPrediction predict_step(const Workload& w, const GemmModel& model);

struct Suggestion {
  StepSpec shape;
  std::vector<std::string> changes;  // "heads 32 -> 20 (h/a 80 -> 128)"
  double param_change = 0;           // relative to the original count
  StepPrediction prediction;
  double gain = 0;         // predicted step TFLOP/s over the original's, minus 1
  double time_change = 0;  // predicted step time over the original's, minus 1
};

struct AdvisorOptions {
  double tolerance = 0.05;  // largest relative parameter-count change of a suggestion
  int max_suggestions = 8;
  int tp = 1;  // tensor-parallel degree for the rules
};

struct AdvisorReport {
  StepSpec shape;
  StepPrediction current;
  std::vector<RuleViolation> rules;
  std::vector<Suggestion> suggestions;  // shape changes, best first
  std::vector<Suggestion> microbatch;   // same shape, larger micro-batch (needs memory)
};

AdvisorReport advise(const StepSpec& c, const GemmModel& model, const AdvisorOptions& o);

}  // namespace hwt
