/// Asks the CUDA runtime how many GPUs there are, in plain C++ (no CUDA headers here).
#pragma once

#include <string>

namespace am::detail {

/// The answer of the CUDA runtime: device count, or the error that explains why none are usable.
struct cuda_probe_result {
  int count = 0;
  std::string reason;
  std::string driver;
};

/// Calls cudaGetDeviceCount (and cudaDriverGetVersion); never throws.
cuda_probe_result probe_cuda();

/// The version of the CUDA runtime library this process loaded, as "13.0".
std::string cuda_runtime_version();

} // namespace am::detail
