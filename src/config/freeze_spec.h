// train.freeze: which parts of the model a run leaves untrained. The syntax is a comma-separated
// list of embeddings, layers:A-B (blocks A to B inclusive, counted from 0), layers:N (one block),
// final_norm and head, e.g. "embeddings,layers:0-5".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hwt {

struct FreezeSpec {
  bool embeddings = false, final_norm = false, head = false;
  std::vector<std::pair<int64_t, int64_t>> layers;  // inclusive block ranges
  bool empty() const { return !embeddings && !final_norm && !head && layers.empty(); }
  bool freezes_layer(int64_t i) const;
};

// InputError naming the part that is not one of the above, or a block past model.layers.
FreezeSpec parse_freeze(const std::string& text, int64_t layers);

}  // namespace hwt
