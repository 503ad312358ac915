// Generation from a checkpoint as `hwt generate` prints it, and `hwt predict` on an LM
// checkpoint with it: one prompt streams its text to stdout as tokens arrive; several print each
// result in prompt order when all are done; --json prints one object per prompt. The prefill and
// decode speeds go to stderr.
#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"
#include "train/checkpoint.h"
#include "train/generate.h"

namespace hwt {

struct GenerationOutput {
  bool json = false;
  bool speeds = true;  // the tokens/s line on stderr
};

// InputError when the checkpoint is not a causal language model or a prompt is unusable.
void run_generation(const Checkpoint& ckpt, const std::string& path, const RunConfig& cfg,
                    const std::vector<std::string>& prompts, const GenerateOptions& o,
                    const GenerationOutput& out);

}  // namespace hwt
