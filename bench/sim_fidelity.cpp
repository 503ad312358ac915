// Fast model against the tile-level simulation over designs sampled from the AccelTran space:
// BERT-Tiny training step (seq 128, the space's batch sizes), with AccelTran's sparsity
// (second argument 0) or dense (1). Reports median, 90th percentile and worst relative error
// of latency and energy, and the detailed model's time per design.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "accel/simulator.h"
#include "sim_common.h"

namespace hwt::accel::bench {
namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

void BM_FastVsDetailed(benchmark::State& state) {
  const DesignSpace space = acceltran_space();
  const bool dense = state.range(1) == 1;
  const std::map<int64_t, SimWorkload> w =
      workloads(space, TraceMode::Train, "bert_tiny", dense ? Sparsity::dense() : Sparsity{});
  const HardwareLibrary& lib = default_hardware_library();
  const auto indices = sample_indices(space, static_cast<uint64_t>(state.range(0)), 11);
  std::vector<double> lat, energy;
  double detailed_s = 0;
  uint64_t worst_index = 0;
  for (auto _ : state) {
    lat.clear();
    energy.clear();
    for (uint64_t index : indices) {
      int64_t batch = 0;
      const AccelConfig c = space.design(index, &batch);
      const SimResult f = simulate(w.at(batch), c, lib, Fidelity::Fast);
      const auto t0 = std::chrono::steady_clock::now();
      const SimResult d = simulate(w.at(batch), c, lib, Fidelity::Detailed);
      detailed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      lat.push_back(std::abs(f.total.cycles - d.total.cycles) / d.total.cycles);
      energy.push_back(std::abs(f.costs.energy_j() - d.costs.energy_j()) / d.costs.energy_j());
      if (lat.back() >= *std::max_element(lat.begin(), lat.end())) worst_index = index;
    }
  }
  state.counters["designs"] = static_cast<double>(indices.size());
  state.counters["latency_err_median_pct"] = 100 * quantile(lat, 0.5);
  state.counters["latency_err_p90_pct"] = 100 * quantile(lat, 0.9);
  state.counters["latency_err_worst_pct"] = 100 * quantile(lat, 1.0);
  state.counters["energy_err_median_pct"] = 100 * quantile(energy, 0.5);
  state.counters["energy_err_worst_pct"] = 100 * quantile(energy, 1.0);
  state.counters["detailed_s_per_design"] =
      detailed_s / static_cast<double>(indices.size() * state.iterations());
  state.counters["worst_design_index"] = static_cast<double>(worst_index);
}

BENCHMARK(BM_FastVsDetailed)
    ->Args({200, 0})
    ->Args({200, 1})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace hwt::accel::bench

BENCHMARK_MAIN();
