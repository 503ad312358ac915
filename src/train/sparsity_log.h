// Realised sparsity of model.prune's points (docs/training.md): per log window for
// metrics.jsonl, and per run for sparsity.json. Reading the counters synchronises, so callers
// read them only at log lines and at the end of a run.
#pragma once

#include <nlohmann/json.hpp>

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

}  // namespace hwt
