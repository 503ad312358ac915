// TraceBackend: computes nothing; records every op with shapes, dtype, FLOPs and bytes into
// a Workload. Running a model's training step on it yields the step's full op list.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/trace/workload.h"

namespace hwt {

class TraceBackend final : public Backend {
 public:
  Device device() const override { return Device::Trace; }
  std::string name() const override { return "trace"; }

  const Workload& workload() const { return workload_; }
  Workload take_workload();
  // Starts a new op list (e.g. after model construction, to trace one step only).
  void clear();

  void* allocate(size_t bytes) override;
  // The sizes of every allocation so far (nothing is allocated; the sizes are what a device
  // backend would allocate).
  const std::vector<size_t>& allocations() const { return allocations_; }
  void deallocate(void*) override {}
  void upload(Tensor, const void*) override {}
  void download(void* host, Tensor src) override;
  void set_scope(std::string_view label, Phase phase) override;

  HWT_BACKEND_OPS(HWT_BACKEND_OP_OVERRIDE)

 private:
  OpRecord& record(Op op, OpKind kind, DType dtype);

  Workload workload_;
  std::string scope_;
  Phase phase_ = Phase::Other;
  std::vector<size_t> allocations_;
};

}  // namespace hwt
