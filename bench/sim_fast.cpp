// Design points per second of the fast model: BERT-base training step (and inference), designs
// sampled from the AccelTran space. Target (issue 34): >= 1,000,000/s on one core; MAESTRO
// reports 0.17M/s. BM_Fast*: one design on its own per iteration (library at the space's node
// prepared once). BM_SweepBertBaseTrain: run_design_sweep over 16,384 sampled designs on 1 and
// 2 threads, stage plans prepared once per sweep; wall time, CPU of the whole process.
#include <benchmark/benchmark.h>

#include "accel/sweep.h"
#include "sim_common.h"

namespace hwt::accel::bench {
namespace {

void evaluate(benchmark::State& state, TraceMode mode) {
  const DesignSpace space = acceltran_space();
  const auto w = workloads(space, mode, "bert_base");
  const std::vector<uint64_t> indices = sample_indices(space, 4096, 1);
  const NodeLibrary node = node_library(default_hardware_library(), space.base.technology_nm);
  size_t i = 0;
  for (auto _ : state) {
    int64_t batch = 0;
    const AccelConfig c = space.design(indices[i++ % indices.size()], &batch);
    const SweepPoint pt = evaluate_design(c, batch, w.at(batch), node);
    benchmark::DoNotOptimize(pt.dynamic_j);
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

void BM_SweepBertBaseTrain(benchmark::State& state) {
  const DesignSpace space = acceltran_space();
  const auto w = workloads(space, TraceMode::Train, "bert_base");
  const std::vector<uint64_t> indices = sample_indices(space, 16384, 1);
  const auto threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const std::vector<SweepPoint> pts =
        run_design_sweep(space, w, default_hardware_library(), indices, nullptr, threads);
    benchmark::DoNotOptimize(pts.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(indices.size()));
}

BENCHMARK(BM_FastBertBaseTrain);
BENCHMARK(BM_FastBertBaseInfer);
// Items per second from wall time; the CPU column is the whole process's (both threads).
BENCHMARK(BM_SweepBertBaseTrain)->Arg(1)->Arg(2)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace hwt::accel::bench

BENCHMARK_MAIN();
