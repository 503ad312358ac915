// The options through which every command reads a run config (--config and --set), and those
// the analyses add (--batch, --seq), so that flops, shape and sim take a model the same way.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "workload/trace_step.h"

namespace hwt {

struct ConfigOptions {
  std::string config;
  std::vector<std::string> sets;
  int64_t batch = 0, seq = 0;

  // The TOML config, or a Hugging Face model's config.json (or the folder holding it: see
  // docs/interop.md), with the --set overrides applied.
  RunConfig load() const;
  // The step `c` describes at --batch and --seq (step_spec's defaults where they are not given).
  StepSpec step(RunConfig c, TraceMode mode = TraceMode::Train) const {
    return step_spec(std::move(c), batch, seq, mode);
  }
};

// --config and --set.
inline void add_config_options(CLI::App* cmd, ConfigOptions& o) {
  cmd->add_option("--config", o.config,
                  "Config TOML file, the name of one in configs/ (gpt2_124m, bert_base, ...), or a "
                  "Hugging Face model folder or its config.json");
  cmd->add_option("--set", o.sets, "Override a config key: --set model.hidden=512 (repeatable)");
}

// --config, --set, --batch and --seq.
inline void add_step_options(CLI::App* cmd, ConfigOptions& o) {
  add_config_options(cmd, o);
  cmd->add_option("--batch", o.batch, "Micro-batch size (default: train.batch_size)");
  cmd->add_option("--seq", o.seq, "Sequence length (default: data.max_len)");
}

// `old_name`, the spelling of `new_name` in earlier releases: still sets `target`, with a
// deprecation warning (kept for one release).
void add_deprecated_alias(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                          std::string& target);

}  // namespace hwt
