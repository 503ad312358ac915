// EventProfilingBackend: forwards every op to a CUDA backend and brackets it with CUDA events on
// that backend's stream, so each op's device time is measured without synchronising between
// ops (ProfilingBackend's host-side syncs would dwarf the few microseconds of a decode step's
// kernels). An op's time runs from the GPU reaching its start event to it finishing its last
// kernel; gaps inside a multi-kernel op, where the host was still launching, count as its own.
// The steps run without a CUDA graph, so an op of several kernels (the decode attention and its
// combine, say) reads longer than it runs inside a graph: compare ops of one kernel, or time
// the op itself inside a graph (bench_kernels "decode linear"). Host work between ops (uploads,
// downloads) is not an op and is not counted.
#pragma once

#ifdef HWT_WITH_CUDA
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "op_profile.h"

namespace hwt::bench {

class EventProfilingBackend final : public ForwardingBackend {
 public:
  explicit EventProfilingBackend(CudaBackend& inner) : ForwardingBackend(inner), cuda_(inner) {}
  ~EventProfilingBackend() override {
    for (auto& [a, b] : events_) {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  }
  EventProfilingBackend(const EventProfilingBackend&) = delete;
  EventProfilingBackend& operator=(const EventProfilingBackend&) = delete;

  // Device microseconds and calls per "op@scope" since the last clear(); synchronises.
  std::map<std::string, std::pair<double, int>> totals() {
    in_.synchronize();
    std::map<std::string, std::pair<double, int>> out;
    for (size_t i = 0; i < used_; ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events_[i].first, events_[i].second);
      auto& t = out[labels_[i]];
      t.first += 1000.0 * ms;
      t.second += 1;
    }
    return out;
  }
  void clear() { used_ = 0; }
  std::string name() const override { return "event-profiled " + in_.name(); }

 private:
  void run(Op op, const std::function<void()>& f) override {
    if (used_ == events_.size()) {
      cudaEvent_t a = nullptr, b = nullptr;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      events_.emplace_back(a, b);
      labels_.emplace_back();
    }
    const auto [start, end] = events_[used_];
    labels_[used_] = std::string(op_name(op)) + "@" + scope_;
    ++used_;
    cudaEventRecord(start, cuda_.stream());
    f();
    cudaEventRecord(end, cuda_.stream());
  }

  CudaBackend& cuda_;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events_;
  std::vector<std::string> labels_;
  size_t used_ = 0;
};

}  // namespace hwt::bench
#endif
