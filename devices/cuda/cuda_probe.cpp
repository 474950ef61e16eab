#include "devices/cuda/cuda_probe.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace am::detail {

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

} // namespace

cuda_probe_result probe_cuda() {
  cuda_probe_result result;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    result.driver = version_text(driver);
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    result.reason = std::string("cudaGetDeviceCount failed with ") + cudaGetErrorName(err) + " ("
                    + std::to_string(static_cast<int>(err)) + "): " + cudaGetErrorString(err);
    if (driver == 0)
      result.reason += "; no CUDA driver is installed on this machine";
    cudaGetLastError();
    return result;
  }
  if (count == 0) {
    result.reason = "the CUDA driver reports no GPUs";
    return result;
  }
  result.count = count;
  return result;
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess)
    return "unknown";
  return version_text(v);
}

} // namespace am::detail
