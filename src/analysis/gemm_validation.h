// Shapes the fitted GEMM model is checked on: every distinct GEMM of the training steps of
// published model shapes (the configs/ presets: GPT-2, BERT, GPT-3, Pythia, LLaMA-like, CLIP
// text) and of poorly shaped variants of them, leaving out shapes the sweep fits on. These are the
// GEMMs the advisor predicts in practice, so their rank correlation and error are the model's
// accuracy.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_calibration.h"
#include "analysis/shape_advisor.h"

namespace hwt {

struct NamedCase {
  std::string name;
  StepSpec shape;
};

std::vector<NamedCase> validation_cases();

struct ValidationShape {
  std::string source;  // first config it comes from
  GemmCall gemm;       // as the step runs it
};

std::vector<ValidationShape> validation_shapes();

struct ValidationResult {
  std::vector<ValidationShape> shapes;
  std::vector<double> seconds;  // measured; NaN where cuBLASLt could not run the shape
  FitQuality quality;
};

ValidationResult run_validation(const GemmModel& model, const GemmMeasure& measure);
std::string validation_csv(const ValidationResult& r, const GemmModel& model);

}  // namespace hwt
