#include "codesign/optimise.h"

#include <algorithm>
#include <map>
#include <memory>
#include <pagmo/algorithm.hpp>
#include <pagmo/algorithms/nsga2.hpp>
#include <pagmo/algorithms/sga.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>
#include <utility>

#include "core/error.h"

namespace hwt::codesign {
namespace {

// pagmo copies problems, so this holds pointers to the search's state. The decision vector
// holds only the free positions (NSGA-II refuses a variable whose bounds are equal): position 0
// is the candidate, 1 + k the design's digit k.
struct PairProblem {
  const std::vector<Candidate>* candidates = nullptr;
  HardwareEvaluator* hw = nullptr;
  const PairMetrics* baseline = nullptr;
  Goal goal = Goal::Pareto;
  std::vector<uint64_t> radices;  // per position
  std::vector<size_t> free;       // positions with more than one choice
  // Every pair evaluated, shared by pagmo's copies: the fronts come from it rather than from
  // the final population, which drops non-dominated pairs as duplicates crowd it.
  std::shared_ptr<std::map<std::pair<size_t, uint64_t>, PairMetrics>> seen =
      std::make_shared<std::map<std::pair<size_t, uint64_t>, PairMetrics>>();

  PairProblem() = default;
  PairProblem(const std::vector<Candidate>& c, HardwareEvaluator& h, const PairMetrics& b, Goal g)
      : candidates(&c), hw(&h), baseline(&b), goal(g) {
    radices = {c.size()};
    for (uint64_t r : h.space().radices()) radices.push_back(r);
    for (size_t i = 0; i < radices.size(); ++i)
      if (radices[i] > 1) free.push_back(i);
  }

  std::pair<size_t, uint64_t> decode(const pagmo::vector_double& x) const {
    std::vector<uint64_t> pos(radices.size(), 0);
    for (size_t i = 0; i < free.size(); ++i) pos[free[i]] = static_cast<uint64_t>(x[i]);
    return {static_cast<size_t>(pos[0]), hw->space().index_of({pos.begin() + 1, pos.end()})};
  }
  PairMetrics metrics(size_t c, uint64_t design) const {
    return {(*candidates)[c].accuracy, hw->evaluate((*candidates)[c].shape, design)};
  }
  pagmo::vector_double fitness(const pagmo::vector_double& x) const {
    const auto [c, design] = decode(x);
    const PairMetrics m = metrics(c, design);
    seen->emplace(std::pair(c, design), m);
    if (goal == Goal::Weighted) return {weighted_score(m, *baseline)};
    return {-m.accuracy, m.hw.latency_s, m.hw.energy_j(), m.hw.area_mm2};
  }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const {
    pagmo::vector_double lo(free.size(), 0.0), hi;
    for (size_t i : free) hi.push_back(static_cast<double>(radices[i] - 1));
    return {lo, hi};
  }
  pagmo::vector_double::size_type get_nobj() const { return goal == Goal::Weighted ? 1 : 4; }
  pagmo::vector_double::size_type get_nix() const { return free.size(); }
};

bool dominates(const PairMetrics& a, const PairMetrics& b) {
  const double fa[] = {-a.accuracy, a.hw.latency_s, a.hw.energy_j(), a.hw.area_mm2};
  const double fb[] = {-b.accuracy, b.hw.latency_s, b.hw.energy_j(), b.hw.area_mm2};
  bool better = false;
  for (size_t i = 0; i < 4; ++i) {
    if (fa[i] > fb[i]) return false;
    better = better || fa[i] < fb[i];
  }
  return better;
}

}  // namespace

std::vector<size_t> non_dominated(const std::vector<PairMetrics>& pairs) {
  std::vector<size_t> out;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (std::none_of(pairs.begin(), pairs.end(),
                     [&](const PairMetrics& q) { return dominates(q, pairs[i]); }))
      out.push_back(i);
  return out;
}

std::vector<FoundPair> optimise_pairs(const std::vector<Candidate>& candidates,
                                      HardwareEvaluator& hw, const PairMetrics& baseline, Goal goal,
                                      const EvolveOptions& o) {
  HWT_CHECK(!candidates.empty(), "no candidate shapes");
  HWT_CHECK(o.population >= 8 && o.population % 4 == 0 && o.generations >= 1,
            "population {}, generations {}", o.population, o.generations);
  const PairProblem problem(candidates, hw, baseline, goal);
  if (problem.free.empty()) {  // one shape, one design: nothing to search
    FoundPair f{0, 0, problem.metrics(0, 0), 0};
    f.score = weighted_score(f.metrics, baseline);
    return {f};
  }
  pagmo::population pop(pagmo::problem(problem),
                        static_cast<pagmo::population::size_type>(o.population), o.seed);
  const auto gens = static_cast<unsigned>(o.generations);
  const auto seed = static_cast<unsigned>(o.seed);
  pagmo::algorithm algo = goal == Goal::Pareto
                              ? pagmo::algorithm(pagmo::nsga2(gens, 0.95, 10., 0.05, 20., seed))
                              : pagmo::algorithm(pagmo::sga(gens, .9, 1., .05, 1., 2, "exponential",
                                                            "uniform", "tournament", seed));
  pop = algo.evolve(pop);  // the pairs it met are in problem.seen

  std::vector<FoundPair> found;
  for (const auto& [pair, m] : *problem.seen)
    found.push_back({pair.first, pair.second, m, weighted_score(m, baseline)});
  if (goal == Goal::Weighted) {
    std::stable_sort(found.begin(), found.end(),
                     [](const FoundPair& a, const FoundPair& b) { return a.score < b.score; });
    return found;
  }
  std::vector<PairMetrics> metrics;
  for (const FoundPair& f : found) metrics.push_back(f.metrics);
  std::vector<FoundPair> front;
  for (size_t i : non_dominated(metrics)) front.push_back(found[i]);
  return front;
}

}  // namespace hwt::codesign
