// How a sequence classifier summarises the hidden states (model.pooling), and so what the pooling
// ops compute.
#pragma once

#include <cstdint>

namespace hwt {

enum class Pooling : uint8_t { First, Mean };

}  // namespace hwt
