/// Memory statistics of a device, like JAX's `Device.memory_stats()`.
#pragma once

#include "actors/device_info.hpp"

#include <cstdint>

namespace am {

/// What a device's allocator holds. Sizes count whole blocks (requests rounded up to their size class).
struct memory_stats {
  std::uint64_t bytes_in_use = 0;      ///< bytes of live buffers
  std::uint64_t peak_bytes_in_use = 0; ///< the most `bytes_in_use` has been since the device started
  std::uint64_t bytes_limit = 0;       ///< the device's limit (`cpu_memory_limit`); 0 = none
  std::uint64_t bytes_reserved = 0;    ///< bytes of freed blocks kept in the pool for reuse
  std::uint64_t num_allocs = 0;        ///< buffers allocated since the device started (pool hits too)
};

/// The statistics of `d` in the current runtime. Thread-safe. Throws am::runtime_error when no
/// runtime is running, am::value_error for an unknown device or a CUDA device whose runtime has no
/// statistics ("memory statistics for CUDA devices are not available in this build").
memory_stats get_memory_stats(const device& d);

} // namespace am
