#include "train/fine_tune.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/error.h"

namespace hwt {
namespace {

// Model keys that change how the model trains or what it predicts, not what its weights are.
constexpr std::array<std::string_view, 8> kTrainingModelKeys = {
    "model.head",     "model.pooling",        "model.dropout",         "model.attn_dropout",
    "model.init_std", "model.vocab_multiple", "model.hidden_multiple", "model.ffn_multiple"};

bool training_key(const std::string& key) {
  return key.starts_with("model.prune.") ||
         std::find(kTrainingModelKeys.begin(), kTrainingModelKeys.end(), key) !=
             kTrainingModelKeys.end();
}

}  // namespace

RunConfig init_run_config(const RunConfig& user, const CheckpointInfo& init,
                          const std::string& init_path) {
  const nlohmann::json mine = to_json(user), defaults = to_json(RunConfig{});
  nlohmann::json merged = to_json(init.config);
  const bool learned_positions = merged.at("model.position") == "learned";
  for (const auto& [key, value] : mine.items()) {
    if (!key.starts_with("model.")) {
      merged[key] = value;  // data, train and optim: the user's
      continue;
    }
    if (key == "model.num_labels" || key == "model.num_token_labels" ||
        (key == "model.max_seq" && !learned_positions)) {
      merged[key] = value;
      continue;
    }
    if (value == defaults.at(key)) continue;  // not set: the init's
    if (training_key(key)) {
      merged[key] = value;
      continue;
    }
    if (value != merged.at(key))
      fail_input(
          "--init {}: the config sets {}={}, but the init's model has {} (leave the key out: "
          "the model's shape comes from the init)",
          init_path, key, value.dump(), merged.at(key).dump());
  }
  RunConfig run = run_config_from_json(merged);
  validate(run);
  return run;
}

bool names_own_tokenizer(const DataConfig& user, const nlohmann::json& init_tokenizer) {
  if (!user.vocab.empty()) return true;
  RunConfig c;
  c.data = user;
  const nlohmann::json kind = to_json(c).at("data.tokenizer");
  if (kind == to_json(RunConfig{}).at("data.tokenizer")) return false;
  return init_tokenizer.is_null() || kind != init_tokenizer.at("kind");
}

}  // namespace hwt
