#include "codesign/objectives.h"

#include <algorithm>

namespace hwt::codesign {

double weighted_score(const PairMetrics& p, const PairMetrics& baseline, const ScoreWeights& w) {
  constexpr double kMinError = 1e-3;
  const double error = std::max(1 - p.accuracy, 0.0);
  const double base_error = std::max(1 - baseline.accuracy, kMinError);
  const HwMetrics &h = p.hw, &b = baseline.hw;
  return w.accuracy * error / base_error + w.area * h.area_mm2 / b.area_mm2 +
         w.dynamic * h.dynamic_j / b.dynamic_j + w.leakage * h.leakage_j / b.leakage_j +
         w.latency * h.latency_s / b.latency_s;
}

}  // namespace hwt::codesign
