// The MPI communicator: data parallel between CPU processes started by mpirun or srun. Also
// carries the NCCL unique id from rank 0 to the others when MPI started a GPU job.
#pragma once

#include <memory>
#include <span>

#include "dist/collective_watchdog.h"
#include "dist/communicator.h"
#include "dist/world.h"

namespace hwt {

// Initialises MPI once per process (and finalises it at exit); the world it reports.
World init_mpi();
// Copies `bytes` from rank 0 to every rank (blocking).
void mpi_broadcast(std::span<std::byte> bytes);

class MpiCommunicator : public Communicator {
 public:
  // Call init_mpi() first. Collectives stop the process after timeout_s of waiting.
  explicit MpiCommunicator(double timeout_s);
  ~MpiCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }
  void all_reduce_sum(Tensor data) override;
  void all_reduce_max(Tensor data) override;
  void reduce_scatter_sum(Tensor in, Tensor out) override;
  void all_gather(Tensor in, Tensor out) override;
  void wait() override;
  void sum_host(std::span<double> values) override;

 private:
  int rank_ = 0, size_ = 1;
  struct Pending;  // MPI requests of background all-reduces
  std::unique_ptr<Pending> pending_;
  CollectiveWatchdog watchdog_;
};

}  // namespace hwt
