/// Turning CUDA runtime errors into actormesh exceptions, in plain C++ (the error is passed as its
/// integer value, so this header needs no CUDA headers).
#pragma once

#include "actormesh/actors/device_info.hpp"

#include <cstddef>
#include <string>

namespace am::detail::cuda {

/// Throws am::runtime_error naming `what` and the device when `error` (a cudaError_t) is not
/// cudaSuccess, after clearing it from the thread's last-error slot.
void check(int error, const char* what, const device& dev);

/// The exception for a failed allocation of `bytes` on `dev`: am::out_of_memory_error
/// "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes on CudaDevice(id=K)".
[[noreturn]] void throw_out_of_memory(std::size_t bytes, const device& dev, const std::string& detail);

/// Makes `ordinal` the calling thread's current device for its lifetime, then restores the previous.
class scoped_device {
public:
  explicit scoped_device(int ordinal) noexcept;
  ~scoped_device();

  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

private:
  int previous_ = -1;
  bool changed_ = false;
};

} // namespace am::detail::cuda
