// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum TensorBoard's event files
// frame every record with, and its "masked" form those files store.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hwt {

uint32_t crc32c(const void* data, size_t bytes);

// Rotated right by 15 bits plus a constant, so that a CRC of data holding CRCs stays well spread
// (TensorFlow's record format, tensorflow/core/lib/hash/crc32c.h).
inline uint32_t masked_crc32c(const void* data, size_t bytes) {
  const uint32_t crc = crc32c(data, bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace hwt
