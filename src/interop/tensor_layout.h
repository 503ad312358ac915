// The arithmetic of HfLayout: an hwt parameter from its Hugging Face tensors and back, piece by
// piece (as write_safetensors asks for them).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/safetensors.h"
#include "interop/hf_architecture.h"

namespace hwt {

// Elements [first, first + count) of the hwt parameter `link` makes of its Hugging Face tensors
// `parts` (in link.hf's order; F32, F16 or BF16, which convert to fp32 exactly), written as fp32
// to dst. Pieces are made straight from the mapped files, spread over the cores: no tensor is
// held whole in memory.
void hwt_piece_from_hf(const TensorLink& link, const std::vector<SafetensorsFile::View>& parts,
                       int64_t first, int64_t count, float* dst);

// Elements [first, first + count) of Hugging Face tensor `part` of `link` (shapes `shapes`, all
// parts') from the hwt parameter's fp32 values, in `dtype` (F32, or BF16 / F16 rounded to nearest
// even), written to dst, spread over the cores. Returns a value past fp16's largest (65504) when
// the piece holds one in F16 (dst is then unusable).
std::optional<float> hf_piece_from_hwt(const TensorLink& link, size_t part, const float* hwt,
                                       const std::vector<std::vector<int64_t>>& shapes, DType dtype,
                                       int64_t first, int64_t count, void* dst);

int64_t element_count(const std::vector<int64_t>& shape);
// The elements of the hwt parameter `link` makes (its HF shapes fully known).
int64_t hwt_elements(const TensorLink& link);

}  // namespace hwt
