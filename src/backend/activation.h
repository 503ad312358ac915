// The activation functions a linear layer can fuse. Kept apart from ops.h so device code can
// name them without the host-only headers.
#pragma once

#include <cstdint>

namespace hwt {

enum class Activation : uint8_t { None, Gelu, GeluTanh, Relu };

}  // namespace hwt
