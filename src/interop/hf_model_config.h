// A Hugging Face model's config.json (or the folder holding it) as an hwt run config: what
// `hwt import` builds its checkpoint for, and what the analyses read with --config.
#pragma once

#include <string>

#include "config/run_config.h"
#include "interop/hf_architecture.h"

namespace hwt {

struct HfModelConfig {
  const HfArchitecture* architecture = nullptr;
  HfModel model;
  // hwt's defaults around model; data.max_len within model.max_seq; train.precision bf16 or
  // fp16 when torch_dtype says the weights are.
  RunConfig run;
};

// True when `path` names a Hugging Face config: a .json file, or a folder with a config.json.
bool is_hf_config_path(const std::string& path);

// Reads config.json (of a folder, or the file itself); InputError naming the file and field
// for an unknown architecture or a value hwt cannot hold.
HfModelConfig read_hf_config(const std::string& path);

}  // namespace hwt
