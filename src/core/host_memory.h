// How much memory this machine can still give: Linux's MemAvailable (free memory plus caches it
// can drop), read from /proc/meminfo. Large allocations are checked against it first, because
// with overcommit a too-large allocation succeeds and the process is killed later, when its
// pages are touched.
#pragma once

#include <cstdint>
#include <optional>

namespace hwt {

// Bytes available now; nullopt where the kernel does not say (not Linux).
std::optional<uint64_t> available_host_memory();

}  // namespace hwt
