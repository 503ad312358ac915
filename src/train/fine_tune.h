// `hwt train --init CHECKPOINT`: a run that starts from another run's (or an import's) weights
// with fresh optimizer state at step 0 (docs/training.md, "Fine-tuning").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "config/run_config.h"
#include "train/checkpoint.h"

namespace hwt {

// The run's config: the init's model, and the user's data, train and optim keys. Of the model
// keys, those that only change how the model trains or what it predicts (model.head,
// model.pooling, the dropouts, model.init_std, the storage paddings, model.prune.*) are the
// user's where the user's config sets them to other than the default; model.num_labels and
// model.num_token_labels are the user's (0: the data's classes). Every other model key shapes
// the weights: where the user's config sets one to other than the default and the init has
// another value, InputError naming the key and both values. model.max_seq shapes them with
// learned positions only; otherwise it is the user's.
RunConfig init_run_config(const RunConfig& user, const CheckpointInfo& init,
                          const std::string& init_path);

// Whether the user's data keys name a tokenizer other than the init's: data.vocab is set, or
// data.tokenizer is neither the default nor the init tokenizer's kind. Otherwise the run
// tokenizes with the init's (InputError when the init has none).
bool names_own_tokenizer(const DataConfig& user, const nlohmann::json& init_tokenizer);

}  // namespace hwt
