#include "model/rope.h"

#include <cmath>
#include <numbers>

namespace hwt {

std::vector<double> rope_inverse_frequencies(const ModelConfig& cfg) {
  const int64_t dim = cfg.rotary_dim(), half = dim / 2;
  const RopeConfig& r = cfg.rope;
  std::vector<double> inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    double f = std::pow(r.theta, -static_cast<double>(2 * i) / static_cast<double>(dim));
    if (r.scaling_factor > 0) {
      // Llama 3.1 (Meta's reference, apply_scaling): long wavelengths slow down by the factor,
      // short ones stay, and the band between blends the two.
      const double wavelength = 2 * std::numbers::pi / f;
      const double old = static_cast<double>(r.original_max_seq);
      if (wavelength > old / r.low_freq_factor) {
        f /= r.scaling_factor;
      } else if (wavelength >= old / r.high_freq_factor) {
        const double smooth =
            (old / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        f = (1 - smooth) * f / r.scaling_factor + smooth * f;
      }
    }
    inv[static_cast<size_t>(i)] = f;
  }
  return inv;
}

RopeTables rope_tables(const ModelConfig& cfg, int64_t positions) {
  const std::vector<double> inv = rope_inverse_frequencies(cfg);
  const size_t half = inv.size();
  RopeTables t;
  t.cos.resize(static_cast<size_t>(positions) * half);
  t.sin.resize(t.cos.size());
  for (int64_t p = 0; p < positions; ++p)
    for (size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * inv[i];
      t.cos[static_cast<size_t>(p) * half + i] = static_cast<float>(std::cos(angle));
      t.sin[static_cast<size_t>(p) * half + i] = static_cast<float>(std::sin(angle));
    }
  return t;
}

}  // namespace hwt
