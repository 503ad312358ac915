// `hwt train --gpus N`: the N ranks of a one-machine job as child processes, like torchrun.
#pragma once

#include <string>
#include <vector>

namespace hwt {

// Runs this process's own command line (with extra_args appended) as `ranks` children: child
// i gets HWT_RANK=i, HWT_WORLD_SIZE, HWT_NCCL_ID=nccl_id_hex and the i-th visible GPU as its
// only one. Waits for all; when one fails, stops the others (SIGTERM, then SIGKILL after 10 s).
// Returns 0 when every rank succeeded, else the exit code of the first that failed.
int run_local_ranks(int ranks, const std::vector<std::string>& extra_args,
                    const std::string& nccl_id_hex);

}  // namespace hwt
