// RunConfig: everything a run is configured by, loaded from TOML plus --set overrides.
// The key table is the single source for parsing, validation messages, run.json and docs.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

#include "config/config_key.h"
#include "config/data_config.h"
#include "config/model_config.h"
#include "config/train_config.h"

namespace hwt {

struct RunConfig {
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  OptimConfig optim;
};

const std::vector<ConfigKey<RunConfig>>& run_config_keys();

// Reads a TOML file (empty: defaults only), then applies "key=value" overrides in order. A name
// instead of a path is a shipped config: "gpt2_124m" (or "gpt2-124m") is configs/gpt2_124m.toml.
// Malformed TOML, unknown keys, wrong types and inconsistent values raise InputError.
RunConfig load_run_config(const std::string& config, const std::vector<std::string>& overrides);

void apply_override(RunConfig& c, const std::string& key_equals_value);
void validate(const RunConfig& c);

// Flat {"model.hidden": 256, ...}: stored in run.json and checkpoint metadata.
nlohmann::json to_json(const RunConfig& c);
RunConfig run_config_from_json(const nlohmann::json& j);
std::string to_toml(const RunConfig& c);

// The key reference (docs/config.md is this text).
std::string config_reference_markdown();

}  // namespace hwt
