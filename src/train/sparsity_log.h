// Realised sparsity of model.prune's points (docs/training.md): per log window for
// metrics.jsonl, and per run for sparsity.json, which hwt sim reads back. Reading the counters
// synchronises, so callers read them only at log lines and at the end of a run.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "model/pruning.h"

namespace hwt {

// {"attn.qkv": 0.41, ..., "overall": 0.37}: zeros / elements per point and over every point.
nlohmann::json sparsity_fractions(const std::vector<PruneCount>& counts);

class SparsityLog {
 public:
  explicit SparsityLog(Pruning& pruning) : pruning_(pruning) {}
  // The fractions of the counts since the previous call (since the start for the first).
  nlohmann::json window();
  // sparsity.json: the thresholds, each point's zeros, elements and fraction, and the overall
  // fraction, over the whole run.
  void write_run_file(const std::string& path, const PruneConfig& cfg) const;

 private:
  Pruning& pruning_;
  std::vector<PruneCount> last_;
};

// A run's sparsity.json read back: its thresholds and, per point it pruned, the fraction of zeros.
struct RunSparsity {
  std::string path;
  PruneConfig thresholds;
  std::array<std::optional<double>, kPrunePoints> fraction{};  // indexed by PrunePoint
};

// `path` is a sparsity.json or the run folder holding one. Missing file, invalid JSON, a
// missing or mistyped field, a fraction outside [0, 1] or an unknown point name: InputError.
RunSparsity read_run_sparsity(const std::string& path);
// The same from JSON already parsed (`where` names it in errors and becomes `path` unless the
// object has a "file"), and back: the thresholds, each point's fraction and the file.
RunSparsity run_sparsity_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const RunSparsity& r);

}  // namespace hwt
