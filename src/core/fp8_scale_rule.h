// Delayed scaling's rule for one fp8 tensor (train/fp8_scaling.h says where it comes from), in
// one definition for the CPU reference and the CUDA kernel of the scale update. Kept free of
// host-only headers so device code can include it.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hostdevice.h"

namespace hwt {

// Which amax of a tensor's history sets its next scale: the largest of the window, or the
// latest step's.
enum class AmaxAlgorithm : uint8_t { Max, MostRecent };

// The larger of two amaxes, NaN if either is: a NaN in the window keeps the scale as it was.
HWT_HD float fp8_amax_join(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}

// The next scale of a tensor whose amax over the window is `amax`: fp8_max / amax / 2^margin,
// or `scale` unchanged where amax is 0 (no evidence) or not finite.
HWT_HD float fp8_next_scale(float amax, float scale, float fp8_max, int margin) {
  const bool finite = amax - amax == 0.0f;  // inf - inf and NaN - NaN are NaN
  if (!(amax > 0.0f) || !finite) return scale;
  return fp8_max / amax / ldexpf(1.0f, margin);
}

}  // namespace hwt
