// A trained model loaded back from a checkpoint, with its tokenizer and labels, for `hwt eval`
// and `hwt predict`.
#pragma once

#include <memory>
#include <string>

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

// Builds the checkpoint's model on the requested device, planned for max_batch examples.
LoadedModel load_model(const Checkpoint& ckpt, DeviceChoice device, int threads, int64_t max_batch);

}  // namespace hwt
