// Which normalisation a model's norms compute (model.norm_kind), and so what the norm ops do.
#pragma once

#include <cstdint>

namespace hwt {

// LayerNorm (Ba et al. 2016): (x - mean) · rstd · gamma + beta. RmsNorm (Zhang & Sennrich 2019,
// Llama): x · rstd · gamma with rstd = 1/sqrt(mean(x²) + eps), no mean and no beta.
enum class NormKind : uint8_t { LayerNorm, RmsNorm };

}  // namespace hwt
