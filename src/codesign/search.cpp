#include "codesign/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "codesign/surrogate.h"
#include "core/error.h"

namespace hwt::codesign {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const ReportedPair& p) {
  return fmt::format(
      "{} on design {} (batch {}): accuracy {:.2f}%, {:.3g} s and {:.3g} J per "
      "sequence, {:.1f} mm², score {:.3f}",
      p.shape.key(), p.design_index, p.batch, 100 * p.metrics.accuracy, p.metrics.hw.latency_s,
      p.metrics.hw.energy_j(), p.metrics.hw.area_mm2, p.score);
}

class Search {
 public:
  Search(const SearchInputs& in, AccuracySource& source, RunCache& cache, const SearchOptions& o,
         const std::function<void(const std::string&)>& log, const SearchProgress& progress)
      : in_(in),
        source_(source),
        cache_(cache),
        o_(o),
        log_(log),
        progress_(progress),
        start_(Clock::now()) {}

  SearchResult run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool budget_left() const {
    return static_cast<int64_t>(res_.runs.size()) < o_.runs &&
           (o_.time_budget_s <= 0 || elapsed() < o_.time_budget_s);
  }
  bool trained(const ModelShape& s) const {
    return std::any_of(res_.runs.begin(), res_.runs.end(),
                       [&](const TrainedRun& r) { return r.shape == s; });
  }
  const TrainedRun& measure(const ModelShape& s);
  // Hands a run's measured sparsity, if any, to the hardware evaluator.
  void use_sparsity(const TrainedRun& r) {
    if (hw_ && r.sparsity) hw_->use_measured(r.shape, *r.sparsity);
  }
  std::vector<Candidate> trained_candidates() const;
  ReportedPair report(const std::vector<Candidate>& c, const FoundPair& f) const;
  // The pair of lowest weighted score: from NSGA-II's front of `c` (stored in `front` if
  // given) and, in weighted mode, from the genetic algorithm, whichever scores lower.
  ReportedPair choose(const std::vector<Candidate>& c, uint64_t seed,
                      std::vector<ReportedPair>* front = nullptr);
  std::vector<ModelShape> propose(const GaussianProcess& gp, const ShapeFeatures& features,
                                  int64_t round);
  void log(const std::string& s) const {
    if (log_) log_(s);
  }

  const SearchInputs& in_;
  AccuracySource& source_;
  RunCache& cache_;
  const SearchOptions& o_;
  const std::function<void(const std::string&)>& log_;
  const SearchProgress& progress_;
  Clock::time_point start_;
  SearchResult res_;
  std::optional<HardwareEvaluator> hw_;
  PairMetrics baseline_;
};

const TrainedRun& Search::measure(const ModelShape& s) {
  const int64_t n = static_cast<int64_t>(res_.runs.size()) + 1;
  if (const TrainedRun* c = cache_.find(s)) {
    ++res_.cached;
    res_.runs.push_back(*c);
    log(fmt::format("  run {}/{} {}: valid accuracy {:.2f}% (cached)", n, o_.runs, s.key(),
                    100 * c->accuracy));
  } else {
    const TrainedRun r = source_.run(s);
    cache_.add(r);
    ++res_.trained;
    res_.training_seconds += r.seconds;
    res_.runs.push_back(r);
    log(fmt::format("  run {}/{} {}: valid accuracy {:.2f}%, {} steps in {:.1f} s on {}", n,
                    o_.runs, s.key(), 100 * r.accuracy, r.steps, r.seconds, r.backend));
  }
  use_sparsity(res_.runs.back());
  if (progress_) progress_(n, o_.runs);
  return res_.runs.back();
}

std::vector<Candidate> Search::trained_candidates() const {
  std::vector<Candidate> c;
  for (const TrainedRun& r : res_.runs) c.push_back({r.shape, r.accuracy});
  return c;
}

ReportedPair Search::report(const std::vector<Candidate>& c, const FoundPair& f) const {
  ReportedPair p;
  p.shape = c[f.candidate].shape;
  p.design = hw_->space().design(f.design, &p.batch);
  p.design_index = static_cast<int64_t>(f.design);
  p.metrics = f.metrics;
  p.score = f.score;
  p.sparsity = hw_->sparsity_source(p.shape);
  return p;
}

ReportedPair Search::choose(const std::vector<Candidate>& c, uint64_t seed,
                            std::vector<ReportedPair>* front) {
  EvolveOptions e = o_.evolve;
  e.seed = seed;
  std::vector<ReportedPair> pairs;
  for (const FoundPair& f : optimise_pairs(c, *hw_, baseline_, Goal::Pareto, e))
    pairs.push_back(report(c, f));
  auto by_score = [](const ReportedPair& a, const ReportedPair& b) { return a.score < b.score; };
  ReportedPair best = *std::min_element(pairs.begin(), pairs.end(), by_score);
  if (o_.mode == Goal::Weighted) {
    const ReportedPair w = report(c, optimise_pairs(c, *hw_, baseline_, Goal::Weighted, e).front());
    if (by_score(w, best)) best = w;
  }
  if (front) *front = std::move(pairs);
  return best;
}

// The untrained shapes the optimiser puts on the front (or ranks best) when every untrained
// shape counts with its optimistic accuracy, most promising first; topped up with the
// untrained shapes of highest optimistic accuracy.
std::vector<ModelShape> Search::propose(const GaussianProcess& gp, const ShapeFeatures& features,
                                        int64_t round) {
  std::vector<Candidate> cands;
  for (const ModelShape& s : in_.space.all()) {
    if (trained(s)) continue;
    const GaussianProcess::Prediction p = gp.predict(features(s));
    cands.push_back({s, p.mean + o_.kappa * p.std});
  }
  const size_t untrained = cands.size();
  for (const Candidate& c : trained_candidates()) cands.push_back(c);
  EvolveOptions e = o_.evolve;
  e.seed = o_.evolve.seed + static_cast<uint64_t>(round);
  std::vector<size_t> picked;
  for (const FoundPair& f : optimise_pairs(cands, *hw_, baseline_, o_.mode, e))
    if (f.candidate < untrained &&
        std::find(picked.begin(), picked.end(), f.candidate) == picked.end())
      picked.push_back(f.candidate);
  auto by_ucb = [&](size_t a, size_t b) { return cands[a].accuracy > cands[b].accuracy; };
  if (o_.mode == Goal::Pareto) std::stable_sort(picked.begin(), picked.end(), by_ucb);
  std::vector<size_t> rest(untrained);
  std::iota(rest.begin(), rest.end(), size_t{0});
  std::stable_sort(rest.begin(), rest.end(), by_ucb);
  for (size_t i : rest)
    if (std::find(picked.begin(), picked.end(), i) == picked.end()) picked.push_back(i);
  picked.resize(std::min(picked.size(), static_cast<size_t>(o_.per_round)));
  std::vector<ModelShape> out;
  for (size_t i : picked) out.push_back(cands[i].shape);
  return out;
}

SearchResult Search::run() {
  const TrainedRun base = measure(in_.baseline_shape);
  hw_.emplace(in_.make_hardware(base.vocab_size));
  use_sparsity(base);
  baseline_ = {base.accuracy,
               hw_->evaluate(in_.baseline_shape, in_.baseline_design, in_.baseline_batch)};
  res_.baseline = {in_.baseline_shape,
                   in_.baseline_design,
                   in_.baseline_batch,
                   -1,
                   baseline_,
                   weighted_score(baseline_, baseline_),
                   hw_->sparsity_source(in_.baseline_shape)};

  // Round 0: random shapes, so the surrogate has something to fit.
  std::vector<ModelShape> order = in_.space.all();
  std::shuffle(order.begin(), order.end(), std::mt19937_64(o_.evolve.seed));
  RoundLog first;
  for (const ModelShape& s : order) {
    if (static_cast<int64_t>(first.shapes.size()) >= o_.initial || !budget_left()) break;
    if (trained(s)) continue;
    measure(s);
    first.shapes.push_back(s);
  }
  first.runs_done = static_cast<int64_t>(res_.runs.size());
  first.best = choose(trained_candidates(), o_.evolve.seed);
  log(fmt::format("round 0: {} random shapes; best so far {}", first.shapes.size(),
                  describe(first.best)));
  res_.rounds.push_back(first);

  const ShapeFeatures features(in_.space);
  for (int64_t round = 1; budget_left(); ++round) {
    GaussianProcess gp;
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const TrainedRun& r : res_.runs) {
      x.push_back(features(r.shape));
      y.push_back(r.accuracy);
    }
    gp.fit(x, y);
    const std::vector<ModelShape> shapes = propose(gp, features, round);
    if (shapes.empty()) break;
    RoundLog rl;
    rl.round = round;
    for (const ModelShape& s : shapes) {
      if (!budget_left()) break;
      rl.predicted.push_back(gp.predict(features(s)).mean);
      rl.measured.push_back(measure(s).accuracy);
      rl.shapes.push_back(s);
      rl.mae += std::abs(rl.predicted.back() - rl.measured.back());
    }
    rl.mae /= static_cast<double>(std::max<size_t>(rl.shapes.size(), 1));
    rl.runs_done = static_cast<int64_t>(res_.runs.size());
    rl.best = choose(trained_candidates(), o_.evolve.seed + static_cast<uint64_t>(round));
    log(
        fmt::format("round {}: {} shapes, surrogate error {:.2f} points on them (length scale "
                    "{:.2g}, noise {:.2g}); {} runs; best so far {}",
                    round, rl.shapes.size(), 100 * rl.mae, gp.length_scale(), gp.noise(),
                    rl.runs_done, describe(rl.best)));
    res_.rounds.push_back(rl);
  }
  const std::vector<ModelShape> all = in_.space.all();
  const bool space_done =
      std::all_of(all.begin(), all.end(), [&](const ModelShape& s) { return trained(s); });
  res_.stopped_by = static_cast<int64_t>(res_.runs.size()) >= o_.runs ? "runs"
                    : space_done                                      ? "space"
                                                                      : "time";

  // The final search: measured accuracies only. The accelerator-only search: the baseline's
  // model alone.
  res_.chosen = choose(trained_candidates(), o_.evolve.seed, &res_.front);
  std::sort(res_.front.begin(), res_.front.end(), [](const ReportedPair& a, const ReportedPair& b) {
    return a.metrics.accuracy > b.metrics.accuracy;
  });
  res_.baseline_best_design = choose({{in_.baseline_shape, base.accuracy}}, o_.evolve.seed);
  res_.seconds = elapsed();
  return res_;
}

}  // namespace

SearchResult run_search(const SearchInputs& in, AccuracySource& source, RunCache& cache,
                        const SearchOptions& o, const std::function<void(const std::string&)>& log,
                        const SearchProgress& progress) {
  if (o.runs < 1) fail_input("--runs {} must be at least 1", o.runs);
  if (o.initial < 1) fail_input("--initial {} must be at least 1", o.initial);
  if (o.per_round < 1) fail_input("--per-round {} must be at least 1", o.per_round);
  if (o.time_budget_s < 0) fail_input("--time-budget {} must not be negative", o.time_budget_s);
  if (!(o.kappa >= 0)) fail_input("--kappa {} must not be negative", o.kappa);
  if (o.evolve.population < 8 || o.evolve.population % 4 != 0)
    fail_input("--population {} must be a multiple of 4, at least 8", o.evolve.population);
  if (o.evolve.generations < 1)
    fail_input("--generations {} must be at least 1", o.evolve.generations);
  return Search(in, source, cache, o, log, progress).run();
}

}  // namespace hwt::codesign
