// A trained model loaded back from a checkpoint, with its tokenizer and labels, and what it
// does with text: classify and tag lines (a language model generates: train/generate.h). Used
// by `hwt eval`, `hwt predict` and `hwt generate`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "config/run_config.h"
#include "data/dataset.h"
#include "model/model.h"
#include "train/checkpoint.h"

namespace hwt {

struct LoadedModel {
  RunConfig config;  // as saved, with the vocabulary and label counts resolved
  Dataset vocab;     // tokenizer and label sets only
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
};

// Builds the checkpoint's model on the requested device with its weights, not yet planned
// (Model::plan); with `prune`, evaluating with those thresholds instead of the saved ones
// (DynaTran's is an inference-time choice). Activations in fp32, or on a GPU in `precision`'s
// dtype (bf16 or fp16; the CPU computes in fp32 whatever it is).
LoadedModel open_model(const Checkpoint& ckpt, DeviceChoice device, int threads,
                       const std::optional<PruneConfig>& prune = std::nullopt,
                       Precision precision = Precision::Fp32);
// open_model, planned for max_batch examples of data.max_len tokens.
LoadedModel load_model(const Checkpoint& ckpt, DeviceChoice device, int threads, int64_t max_batch,
                       const std::optional<PruneConfig>& prune = std::nullopt);

// A classifier's and tagger's reading of one line (each part present when the task has it).
struct TextPrediction {
  std::optional<std::string> label;
  double probability = 0;                                                // of the label
  std::optional<std::vector<std::pair<std::string, std::string>>> tags;  // (token, tag) after [CLS]
};

// One line through the model (cut to data.max_len tokens); the model must be planned for batch 1.
TextPrediction predict_text(LoadedModel& m, const std::string& text);

}  // namespace hwt
