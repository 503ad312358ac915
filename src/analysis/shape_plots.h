// Throughput curves for the shape report: one block's linear-layer GEMMs against the hidden
// size, and its attention GEMMs against the head size h/a, predicted for every point and
// measured (when a GPU is present) at a subset that mixes aligned and misaligned sizes.
#pragma once

#include <string>
#include <vector>

#include "analysis/shape_advisor.h"

namespace hwt {

struct CurvePoint {
  double x = 0;
  double predicted_tflops = 0;
  double measured_tflops = 0;  // 0: not measured
};

// Hidden sizes 0.75h .. 1.25h in steps of 2, FFN width scaled with h (heads do not matter to
// the linear GEMMs). Measured at six multiples of 64 and at +8 and +2 from each.
std::vector<CurvePoint> hidden_curve(const StepSpec& c, const GemmModel& model,
                                     const GemmMeasure* measure);

// Every head count dividing h with 16 <= h/a <= 512; all points measured when possible.
std::vector<CurvePoint> head_dim_curve(const StepSpec& c, const GemmModel& model,
                                       const GemmMeasure* measure);

std::string curve_svg(const std::vector<CurvePoint>& points, const std::string& title,
                      const std::string& x_label, double mark_x);

}  // namespace hwt
