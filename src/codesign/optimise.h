// The pair optimisers, from pagmo2: NSGA-II for the Pareto front of (accuracy, latency, energy,
// area) and a genetic algorithm for BOSHCODE's weighted score. A decision vector is a candidate
// shape's index followed by the accelerator space's mixed-radix digits, all integers; with one
// candidate this is the accelerator-only search.
#pragma once

#include <cstdint>
#include <vector>

#include "codesign/objectives.h"

namespace hwt::codesign {

// A shape with the accuracy to optimise for (measured, or the surrogate's optimistic guess).
struct Candidate {
  ModelShape shape;
  double accuracy = 0;
};

enum class Goal : uint8_t {
  Pareto,    // NSGA-II: maximise accuracy, minimise latency, energy and area
  Weighted,  // single-objective GA on weighted_score against the baseline
};

struct EvolveOptions {
  int64_t population = 64;  // NSGA-II needs a multiple of 4
  int64_t generations = 60;
  uint64_t seed = 1;
};

struct FoundPair {
  size_t candidate = 0;
  uint64_t design = 0;  // index in the accelerator space
  PairMetrics metrics;
  double score = 0;  // weighted_score against the baseline
};

// Pareto: the non-dominated pairs among all the optimiser evaluated. Weighted: every pair it
// evaluated, best score first.
std::vector<FoundPair> optimise_pairs(const std::vector<Candidate>& candidates,
                                      HardwareEvaluator& hw, const PairMetrics& baseline, Goal goal,
                                      const EvolveOptions& o);

// The indices of the pairs not dominated in (accuracy up, latency, energy, area down).
std::vector<size_t> non_dominated(const std::vector<PairMetrics>& pairs);

}  // namespace hwt::codesign
