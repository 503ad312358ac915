// The NCCL communicator: data parallel between GPUs. NCCL is loaded at run time (from
// HWT_NCCL_LIBRARY, the library path, or a Python environment's nvidia-nccl package), so hwt
// builds and runs single-GPU without it.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "backend/cuda/cuda_backend.h"
#include "dist/collective_watchdog.h"
#include "dist/communicator.h"

namespace hwt {

inline constexpr size_t kNcclIdBytes = 128;
using NcclId = std::array<std::byte, kNcclIdBytes>;

// A new unique id (rank 0 makes it; the others receive it). Raises InputError when NCCL cannot
// be loaded.
NcclId nccl_unique_id();

class NcclCommunicator : public Communicator {
 public:
  // Collective calls are ordered after the backend's stream and run on a stream of their own;
  // one that waits longer than timeout_s aborts the communicator and ends the process.
  NcclCommunicator(CudaBackend& backend, const NcclId& id, int rank, int size, double timeout_s);
  ~NcclCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override;
  void all_reduce_sum(Tensor data) override;
  void all_reduce_max(Tensor data) override;
  void reduce_scatter_sum(Tensor in, Tensor out) override;
  void all_gather(Tensor in, Tensor out) override;
  void wait() override;
  void sum_host(std::span<double> values) override;

 private:
  struct State;
  void begin();  // the communication stream waits for the compute stream
  CudaBackend& backend_;
  int rank_, size_;
  std::unique_ptr<State> s_;
  std::unique_ptr<CollectiveWatchdog> watchdog_;
  bool started_ = false;  // collectives were given since the last wait()
};

}  // namespace hwt
