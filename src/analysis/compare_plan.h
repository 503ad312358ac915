// A list of training configurations to run one after another and compare (`hwt compare --plan`):
// one base config, settings shared by all, a budget of steps or tokens each, and per run a name
// and its own settings.
#pragma once

#include <string>
#include <vector>

#include "config/run_config.h"

namespace hwt {

struct ComparePlan {
  struct Run {
    std::string name;  // its folder under the output folder
    RunConfig config;  // base + shared settings + its settings + the budget as train.max_steps
  };
  std::vector<Run> runs;
  std::string init;  // every run starts from these weights (hwt train --init); empty: none
};

// Reads and checks the whole plan (every run's config loads) before anything runs; InputError
// naming the file and key otherwise. Format: docs/compare.md.
ComparePlan load_compare_plan(const std::string& path);

}  // namespace hwt
