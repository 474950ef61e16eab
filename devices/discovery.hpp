/// Finding the devices of this process: the virtual CPU devices and, when usable, CUDA GPUs.
#ifndef ACTORMESH_DEVICES_DISCOVERY_HPP
#define ACTORMESH_DEVICES_DISCOVERY_HPP

#include <string>

namespace am {

/// What GPU discovery found: the number of usable CUDA devices, or why there are none.
struct gpu_report {
  int count = 0;          ///< usable CUDA devices (0 when none)
  std::string reason;     ///< why `count` is 0; empty when GPUs were found
  std::string driver;     ///< the CUDA driver version when a driver answered, else empty
};

/// Probes for CUDA GPUs unless `wanted` is false. Never throws: a missing driver is a reason.
gpu_report discover_gpus(bool wanted);

} // namespace am

#endif // ACTORMESH_DEVICES_DISCOVERY_HPP
