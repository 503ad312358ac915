// The run config of a command that reads a checkpoint (hwt eval, hwt predict): the saved one
// with --set overrides, of which only model.prune.* may touch the model (the rest of model.* is
// the trained model's). One place, so that every such command takes the same overrides.
#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"
#include "train/checkpoint.h"

namespace hwt {

// InputError for a malformed --set, an invalid result, or a change to a model key other than
// model.prune.*; `path` names the checkpoint in that message.
RunConfig checkpoint_config(const Checkpoint& ckpt, const std::string& path,
                            const std::vector<std::string>& sets);

}  // namespace hwt
