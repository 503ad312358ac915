// hwt compress: a trained dense checkpoint turned into the tensor-train layers of a TT config
// (model.tt sections), each dense matrix by TT-SVD with the config's ranks as caps; every other
// parameter is copied. The result is a checkpoint of the TT model, ready to evaluate or fine-tune.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hwt {

struct CompressedLayer {
  std::string name;  // "layers.0.attn.qkv", "embed.tokens"
  int64_t dense_params = 0, tt_params = 0;
  double relative_error = 0;  // ||W - W_tt|| / ||W||
};

// Reads `checkpoint` (dense), takes model.tt from the TOML file `tt_config` (its other keys are
// ignored: the checkpoint's config rules), writes the TT checkpoint to `out`. `progress(done,
// total)` is called after each layer's TT-SVD when given.
std::vector<CompressedLayer> compress_checkpoint(
    const std::string& checkpoint, const std::string& tt_config, const std::string& out,
    const std::function<void(int64_t done, int64_t total)>& progress = nullptr);

}  // namespace hwt
