// Design points per second of the fast model: BERT-base training step (and inference), designs
// sampled from the AccelTran space, one core. Target: >= 100,000/s (MAESTRO: 0.17M/s).
#include <benchmark/benchmark.h>

#include "accel/design_params.h"
#include "accel/energy_model.h"
#include "accel/fast_model.h"
#include "sim_common.h"

namespace hwt::accel::bench {
namespace {

void evaluate(benchmark::State& state, TraceMode mode) {
  const DesignSpace space = acceltran_space();
  const auto w = workloads(space, mode, "bert_base");
  const std::vector<uint64_t> indices = sample_indices(space, 4096, 1);
  const HardwareLibrary& lib = default_hardware_library();
  size_t i = 0;
  for (auto _ : state) {
    int64_t batch = 0;
    const AccelConfig c = space.design(indices[i++ % indices.size()], &batch);
    const DesignParams p = make_design_params(c, lib);
    const Costs costs = price(fast_total(w.at(batch), p), p);
    benchmark::DoNotOptimize(costs.dynamic_j);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["stage_classes"] = static_cast<double>(w.at(32).classes.size());
  state.counters["ops"] = static_cast<double>(w.at(32).ops.size());
}

void BM_FastBertBaseTrain(benchmark::State& state) {
  evaluate(state, TraceMode::Train);
}
void BM_FastBertBaseInfer(benchmark::State& state) {
  evaluate(state, TraceMode::Infer);
}

BENCHMARK(BM_FastBertBaseTrain);
BENCHMARK(BM_FastBertBaseInfer);

}  // namespace
}  // namespace hwt::accel::bench

BENCHMARK_MAIN();
