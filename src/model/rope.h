// The angles of rotary position embeddings (model.position = "rope"), as Hugging Face's Llama,
// Qwen2 and GPT-NeoX compute them: frequency i of a rotary_dim-wide rotation is
// theta^(-2i / rotary_dim), optionally rescaled as Llama 3 does, and position t turns pair i by
// t times it. The model computes the tables once, for its longest sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "config/model_config.h"

namespace hwt {

// The inverse frequencies, rotary_dim / 2 of them, after Llama 3's scaling when it is on.
std::vector<double> rope_inverse_frequencies(const ModelConfig& cfg);

// cos and sin of every angle, row-major [positions, rotary_dim / 2].
struct RopeTables {
  std::vector<float> cos, sin;
};
RopeTables rope_tables(const ModelConfig& cfg, int64_t positions);

}  // namespace hwt
