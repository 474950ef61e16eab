/// What a device's allocator holds, like JAX's `Device.memory_stats()`: plain figures, shared by
/// the devices that count them and the live counters that report them.
#ifndef ACTORMESH_ACTORS_MEMORY_STATS_HPP
#define ACTORMESH_ACTORS_MEMORY_STATS_HPP

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

} // namespace am

#endif // ACTORMESH_ACTORS_MEMORY_STATS_HPP
