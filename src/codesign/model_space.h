// The model half of the co-design space: transformer shapes (layers, hidden width, heads, FFN
// width) read from a TOML space file (configs/codesign_space.toml; format in docs/codesign.md).
// Every layer of a shape is the same: hwt's model config has one width per model, so this is
// FlexiBERT's space without per-layer choices or other operation types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"

namespace hwt::codesign {

struct ModelShape {
  int64_t layers = 0, hidden = 0, heads = 0, ffn = 0;

  bool operator==(const ModelShape&) const = default;
  // "L2-H128-A4-F512": the cache key and the label in reports.
  std::string key() const;
  // `base` with this shape's model keys.
  RunConfig apply(RunConfig base) const;
};

ModelShape shape_of(const ModelConfig& m);

struct ModelSpace {
  std::string name;
  std::vector<int64_t> layers, hidden, heads, ffn;
  // The file's [prune] thresholds, which every run of the search trains with (unset: the
  // config's model.prune.*).
  std::optional<double> tau_infer, tau_train, tau_act_grad;

  // `base` with the space's pruning thresholds.
  RunConfig pruned(RunConfig base) const;

  size_t size() const { return layers.size() * hidden.size() * heads.size() * ffn.size(); }
  // The shape at `index` (mixed radix: layers fastest, then hidden, heads, ffn).
  ModelShape shape(size_t index) const;
  std::vector<ModelShape> all() const;
};

// Reads the space file; every choice must be a positive integer, every list non-empty and
// duplicate-free, every threshold a number at least 0, and every shape must build on top of
// `base` with the space's thresholds (heads dividing hidden, ...).
// Errors are one InputError line naming the file and key (or the shape that cannot build).
ModelSpace load_model_space(const std::string& path, const RunConfig& base);

}  // namespace hwt::codesign
