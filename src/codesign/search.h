// The co-design search (after TransCODE's BOSHCODE loop): train a few shapes, fit the accuracy
// surrogate, let the pair optimiser propose the shapes whose optimistic accuracy puts them on
// the front (or best by the weighted score), train those, and repeat within a run and time
// budget; then search the trained shapes with their measured accuracies for the final front and
// the chosen pair.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codesign/accuracy.h"
#include "codesign/optimise.h"

namespace hwt::codesign {

struct SearchOptions {
  Goal mode = Goal::Pareto;  // how shapes are proposed and the chosen pair found
  int64_t runs = 16;         // shapes with an accuracy in all (baseline and cached ones count)
  int64_t initial = 4;       // random shapes trained before the surrogate is used
  int64_t per_round = 4;     // shapes trained per round
  double time_budget_s = 0;  // no run starts after this many seconds (0: no limit)
  double kappa = 0.5;        // optimism: a shape is proposed for mean + kappa * std
  EvolveOptions evolve;
};

// A pair in the report: the shape with its measured accuracy, the design (an index in the
// accelerator space, or the baseline's design file) and their metrics.
struct ReportedPair {
  ModelShape shape;
  accel::AccelConfig design;
  int64_t batch = 0;
  int64_t design_index = -1;  // -1: not from the space
  PairMetrics metrics;
  double score = 0;
  std::string sparsity;  // where the simulated step's sparsity came from
};

struct RoundLog {
  int64_t round = 0, runs_done = 0;
  std::vector<ModelShape> shapes;           // trained (or taken from the cache) this round
  std::vector<double> predicted, measured;  // surrogate mean before training, and the truth
  double mae = 0;                           // mean |predicted - measured|
  ReportedPair best;                        // best weighted score over the shapes trained so far
};

struct SearchResult {
  std::vector<ReportedPair> front;  // final Pareto front, by accuracy descending
  ReportedPair chosen, baseline, baseline_best_design;
  std::vector<TrainedRun> runs;  // every shape with an accuracy, in order
  std::vector<RoundLog> rounds;
  int64_t trained = 0, cached = 0;  // runs trained now and taken from the cache
  double seconds = 0, training_seconds = 0;
  std::string stopped_by;  // "runs", "time", or "space" (every shape trained)
};

struct SearchInputs {
  ModelSpace space;
  ModelShape baseline_shape;
  accel::AccelConfig baseline_design;
  int64_t baseline_batch = 0;
  // Makes the hardware evaluator once the baseline run says what vocabulary the data has.
  std::function<HardwareEvaluator(int64_t vocab_size)> make_hardware;
};

// Progress lines (rounds, runs, best so far) go to `log`; `progress(done, total)`, when given,
// follows each run measured (trained or cached) against the budget of runs.
using SearchProgress = std::function<void(int64_t done, int64_t total)>;
SearchResult run_search(const SearchInputs& in, AccuracySource& source, RunCache& cache,
                        const SearchOptions& o, const std::function<void(const std::string&)>& log,
                        const SearchProgress& progress = {});

}  // namespace hwt::codesign
