// Where this process sits in a data-parallel job (docs/data_parallel.md): its rank, the number
// of ranks, its rank among the ranks of its machine, and what started it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hwt {

enum class Launcher : uint8_t {
  Single,  // one process, no data parallel
  Hwt,     // `hwt train --gpus N` started this process as one of N children
  Mpi,     // mpirun, or srun with an MPI plugin: MPI knows the ranks
};

struct World {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  Launcher launcher = Launcher::Single;
  bool distributed() const { return size > 1 || launcher != Launcher::Single; }
  bool leader() const { return rank == 0; }  // the rank that prints and writes run files
};

// The environment variables `hwt train --gpus N` sets in its children.
inline constexpr const char* kRankVar = "HWT_RANK";
inline constexpr const char* kWorldSizeVar = "HWT_WORLD_SIZE";
inline constexpr const char* kNcclIdVar = "HWT_NCCL_ID";  // hex of the NCCL unique id

// Reads the world from the environment: hwt's own variables, then Open MPI's
// (OMPI_COMM_WORLD_*), then SLURM's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) for srun.
// Raises InputError for inconsistent values.
World detect_world();

// The GPUs the ranks of one machine take one each: CUDA_VISIBLE_DEVICES's entries, or the
// indices 0..ranks-1 when it is unset.
std::vector<std::string> local_gpu_ids(int ranks);

}  // namespace hwt
