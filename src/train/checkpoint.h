// Checkpoints in safetensors format: every parameter under its name (in flat-buffer order, so
// the data section is the parameter buffer), optimizer state as flat "optim.<state>" tensors,
// and in the metadata the full config, the tokenizer/labels and the training cursor.
#pragma once

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "core/safetensors.h"
#include "model/param_store.h"
#include "train/optimizer.h"

namespace hwt {

// Where training stands; restoring it (with the data cursor) makes a resumed run exact.
struct TrainState {
  int64_t step = 0;      // optimizer steps taken
  int64_t epoch = 0;     // data epoch of the next batch
  int64_t position = 0;  // batches of that epoch already consumed
  double best_score = -std::numeric_limits<double>::infinity();
  int64_t evals_since_best = 0;
};

struct CheckpointInfo {
  RunConfig config;
  nlohmann::json vocab;  // Dataset::vocab_json()
  TrainState state;
  bool has_optimizer = false;
};

// The metadata of a checkpoint without optimizer state, for writers that stream parameters
// from elsewhere (`hwt import`): write them under their ParamInfo names and data shapes.
std::map<std::string, std::string> checkpoint_metadata(const RunConfig& config,
                                                       const nlohmann::json& vocab,
                                                       const TrainState& state);

// optimizer_state: Optimizer::full_state()'s tensors (count() elements each); null saves none.
// fp8_state: fp8 training's scaling state (Fp8Training::state()), saved as "fp8.scaling"; null
// saves none.
void save_checkpoint(const std::string& path, const RunConfig& config, const nlohmann::json& vocab,
                     const TrainState& state, const ParamStore& params,
                     const std::vector<std::pair<std::string, Tensor>>* optimizer_state,
                     const std::vector<float>* fp8_state = nullptr);

// Opens and validates a checkpoint; InputError for anything that is not a readable hwt checkpoint.
class Checkpoint {
 public:
  explicit Checkpoint(const std::string& path);
  const CheckpointInfo& info() const { return info_; }
  // The saved tensors, each parameter under its name in its data shape (no padding).
  const SafetensorsFile& tensors() const { return file_; }
  // Copies parameters into `params` of a model built as `model`; InputError naming the first
  // architecture key (heads, norm, positions, activation, biases…) the checkpoint's model set
  // otherwise, or the first tensor whose name or shape differs (another model shape).
  void load_parameters(ParamStore& params, const ModelConfig& model) const;
  // The same for a run that starts from these weights (`hwt train --init`): a task head (head.*)
  // the checkpoint lacks or holds in another shape, or any head unless keep_heads, keeps the
  // values `params` holds (its fresh initialisation); returns the names of those left so.
  std::vector<std::string> load_initial_parameters(ParamStore& params, const ModelConfig& model,
                                                   bool keep_heads) const;
  // Copies the optimizer states (the optimizer's shard of them under ZeRO-1), which lie as the
  // padded parameters do: InputError when `model`
  // (the run's) pads the vocabulary or the FFN width otherwise than the checkpoint's run did.
  void load_optimizer(Optimizer& optimizer, const ModelConfig& model) const;
  // fp8 training's scaling state, or nullopt where the saved run did not train in fp8.
  std::optional<std::vector<float>> fp8_state() const;

 private:
  // fresh null: every parameter must be there (load_parameters).
  void load(ParamStore& params, const ModelConfig& model, std::vector<std::string>* fresh,
            bool keep_heads = true) const;

  SafetensorsFile file_;
  CheckpointInfo info_;
};

}  // namespace hwt
