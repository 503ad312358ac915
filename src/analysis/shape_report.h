// The shape advisor's report: the step's GEMM table, the rules broken and the suggestions, as
// text for the terminal or JSON; with measured GEMM times beside the predictions when present.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "analysis/shape_advisor.h"
#include "measure/gemm_timer.h"

namespace hwt {

// GEMM FLOPs and time of a step, or of its transformer blocks only (the "layer GEMMs").
struct GemmTotals {
  double flops = 0, predicted_seconds = 0, measured_seconds = 0;
  bool measured = false;  // every GEMM had a measured time

  double predicted_tflops() const { return flops / predicted_seconds / 1e12; }
  double measured_tflops() const { return measured ? flops / measured_seconds / 1e12 : 0; }
};

GemmTotals gemm_totals(const StepPrediction& p, const MeasuredTimes& m, bool blocks_only);

struct ReportContext {
  const GemmModel* model = nullptr;
  std::string constants_origin;  // calibration file or "defaults for <arch>"
  std::string device;            // measuring device, empty when not measured
  double tolerance = 0.05;
  MeasuredTimes measured;
};

std::string shape_text(const AdvisorReport& r, const ReportContext& ctx);
nlohmann::json shape_json(const AdvisorReport& r, const ReportContext& ctx);

}  // namespace hwt
