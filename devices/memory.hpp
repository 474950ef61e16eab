/// Memory statistics of a device, like JAX's `Device.memory_stats()`.
#ifndef ACTORMESH_DEVICES_MEMORY_HPP
#define ACTORMESH_DEVICES_MEMORY_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/memory_stats.hpp"

namespace am {

/// The statistics of `d` in the current runtime. Thread-safe. Throws am::runtime_error when no
/// runtime is running, am::value_error for an unknown device or a CUDA device whose runtime has no
/// statistics ("memory statistics for CUDA devices are not available in this build").
memory_stats get_memory_stats(const device& d);

} // namespace am

#endif // ACTORMESH_DEVICES_MEMORY_HPP
