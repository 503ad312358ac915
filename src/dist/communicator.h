// Collectives between the ranks of a data-parallel job (docs/data_parallel.md). Two
// implementations: MPI between CPU processes (dist/mpi_communicator.h) and NCCL between GPUs
// (backend/cuda). hwt never moves bytes between processes itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/tensor.h"

namespace hwt {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "mpi" or "nccl"

  // Collectives on backend memory (f32 or bf16), ordered after the work the backend was given
  // before the call. They may run in the background, overlapping later backend work that does
  // not touch their tensors; wait() orders everything given afterwards after all of them.
  virtual void all_reduce_sum(Tensor data) = 0;  // in place
  // f32 only: every rank gets the elementwise largest over the ranks, in place.
  virtual void all_reduce_max(Tensor data) = 0;
  // in holds size() equal parts; rank r's out gets the sum of part r.
  virtual void reduce_scatter_sum(Tensor in, Tensor out) = 0;
  // out gets every rank's in, in rank order (out.numel() == size() * in.numel()); `in` may be
  // this rank's own part of `out`.
  virtual void all_gather(Tensor in, Tensor out) = 0;
  virtual void wait() = 0;

  // Host values summed across ranks in place; blocking.
  virtual void sum_host(std::span<double> values) = 0;
};

}  // namespace hwt
