// Where a shape's accuracy comes from: an AccuracySource trains it (TrainingSource: a short real
// run of hwt's trainer, in-process) or, in tests, computes it. RunCache keeps every finished run
// in DIR/runs.jsonl so a search that was stopped resumes without retraining.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codesign/model_space.h"
#include "train/sparsity_log.h"

namespace hwt::codesign {

struct TrainedRun {
  ModelShape shape;
  double accuracy = 0;       // validation accuracy, what the search optimises
  double test_accuracy = 0;  // test accuracy (best-on-validation weights), reported only
  double seconds = 0;        // wall time of the run
  int64_t steps = 0, vocab_size = 0;
  std::string backend;
  // What the run's pruning zeroed (its sparsity.json), when the config prunes (model.prune.*);
  // empty otherwise, and for cache lines written before runs kept it.
  std::optional<RunSparsity> sparsity;
};

nlohmann::json to_json(const TrainedRun& r);
// `where` names the JSON in errors (a file and line).
TrainedRun trained_run_from_json(const nlohmann::json& j, const std::string& where);

class AccuracySource {
 public:
  virtual ~AccuracySource() = default;
  virtual TrainedRun run(const ModelShape& shape) = 0;
  // What the accuracies depend on besides the shape (config, steps): runs cached with other
  // settings are not reused.
  virtual std::string settings() const = 0;
};

// Trains `base` with the shape's model keys for `steps` steps on the device the config picks
// (train.device: the GPU when there is one), writing each run into runs_dir/<shape key>/. The
// run's checkpoints are deleted afterwards unless kept: dozens of them would fill a disk. A
// config that prunes yields runs with their measured sparsity.
class TrainingSource : public AccuracySource {
 public:
  TrainingSource(RunConfig base, int64_t steps, std::string runs_dir, bool keep_checkpoints);
  TrainedRun run(const ModelShape& shape) override;
  std::string settings() const override;

 private:
  RunConfig base_;
  std::string runs_dir_;
  bool keep_checkpoints_;
};

// DIR/runs.jsonl: one JSON object per finished run, in the order they finished, each tagged
// with the source's settings. Adding a run rewrites the file atomically (core/files.h), so a
// kill leaves the file as it was before or after that run, never half a line.
class RunCache {
 public:
  // Loads the file if it exists; InputError if a line is malformed or was written with other
  // settings (resuming a search with other settings would mix incomparable accuracies).
  RunCache(std::string path, std::string settings);

  const TrainedRun* find(const ModelShape& s) const;
  void add(const TrainedRun& r);
  const std::vector<TrainedRun>& runs() const { return runs_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_, settings_, text_;
  std::vector<TrainedRun> runs_;
};

}  // namespace hwt::codesign
