#include "devices/cuda/cuda_check.hpp"

#include "actormesh/actors/errors.hpp"

#include <cuda_runtime_api.h>

namespace am::detail::cuda {

void check(int error, const char* what, const device& dev) {
  auto err = static_cast<cudaError_t>(error);
  if (err == cudaSuccess)
    return;
  cudaGetLastError();
  std::string text = std::string(what) + " failed on " + to_string(dev) + ": " + cudaGetErrorName(err)
                     + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation)
    throw out_of_memory_error("RESOURCE_EXHAUSTED: " + text);
  throw runtime_error(text);
}

void throw_out_of_memory(std::size_t bytes, const device& dev, const std::string& detail) {
  throw resource_exhausted(bytes, to_string(dev) + (detail.empty() ? "" : " (" + detail + ")"));
}

scoped_device::scoped_device(int ordinal) noexcept {
  if (cudaGetDevice(&previous_) != cudaSuccess)
    previous_ = -1;
  if (previous_ != ordinal)
    changed_ = cudaSetDevice(ordinal) == cudaSuccess;
}

scoped_device::~scoped_device() {
  if (changed_ && previous_ >= 0)
    cudaSetDevice(previous_);
}

} // namespace am::detail::cuda
