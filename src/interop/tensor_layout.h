// The arithmetic of HfLayout: an hwt parameter from its Hugging Face tensors and back, in fp32.
#pragma once

#include <cstdint>
#include <vector>

#include "core/safetensors.h"
#include "interop/hf_architecture.h"

namespace hwt {

// A tensor's values as fp32 (F32, F16 and BF16 convert exactly).
std::vector<float> to_f32(const SafetensorsFile::View& v);

// The hwt parameter `link` makes of `parts` (fp32, in link.hf's order and shapes `shapes`),
// reusing their storage where the layout allows (one copy of a large tensor, not two).
std::vector<float> hwt_from_hf(const TensorLink& link, std::vector<std::vector<float>> parts,
                               const std::vector<std::vector<int64_t>>& shapes);

// Hugging Face tensor `part` of `link` (shape `shape`) from the hwt parameter's values.
std::vector<float> hf_from_hwt(const TensorLink& link, size_t part, const float* hwt,
                               const std::vector<std::vector<int64_t>>& shapes);

int64_t element_count(const std::vector<int64_t>& shape);
// The elements of the hwt parameter `link` makes (its HF shapes fully known).
int64_t hwt_elements(const TensorLink& link);

}  // namespace hwt
