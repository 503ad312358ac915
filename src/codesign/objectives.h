// What a (model shape, accelerator design) pair is judged by, and BOSHCODE's weighted
// scalarisation of it (TransCODE, Tuli & Jha 2023): accuracy 0.5, area 0.1, dynamic energy 0.2,
// leakage energy 0.1, latency 0.1. Each objective is normalised by the baseline pair's value,
// so the baseline scores exactly 1 and lower is better (docs/codesign.md).
#pragma once

#include "codesign/hardware.h"

namespace hwt::codesign {

struct PairMetrics {
  double accuracy = 0;  // validation accuracy in [0, 1] (measured, or the surrogate's)
  HwMetrics hw;
};

struct ScoreWeights {
  double accuracy = 0.5, area = 0.1, dynamic = 0.2, leakage = 0.1, latency = 0.1;
};

// sum of weight * (value / baseline value), with the error rate 1 - accuracy standing for
// accuracy (floored at 0.1 percentage point so a perfect baseline does not divide by zero).
double weighted_score(const PairMetrics& p, const PairMetrics& baseline,
                      const ScoreWeights& w = {});

}  // namespace hwt::codesign
