/// The exceptions actormesh raises, named and worded after JAX's where JAX has one.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace am {

/// Base of every actormesh error.
class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A bad argument value (JAX and Python raise ValueError).
class value_error : public error {
public:
  using error::error;
};

/// A bad argument type or combination (Python's TypeError).
class type_error : public error {
public:
  using error::error;
};

/// A wait that ran past its timeout.
class timeout_error : public error {
public:
  using error::error;
};

/// An operation on something that is gone: a deleted array, a stopped runtime, a dead peer.
class runtime_error : public error {
public:
  using error::error;
};

/// A device ran out of memory (JAX: RESOURCE_EXHAUSTED).
class out_of_memory_error : public error {
public:
  using error::error;
};

/// JAX's RESOURCE_EXHAUSTED error for `bytes` bytes that cannot be allocated on `where` (a device
/// such as "CpuDevice(id=3)", or "the host"): "RESOURCE_EXHAUSTED: Out of memory while trying to
/// allocate N bytes on the host".
inline out_of_memory_error resource_exhausted(std::size_t bytes, const std::string& where) {
  return out_of_memory_error("RESOURCE_EXHAUSTED: Out of memory while trying to allocate " + std::to_string(bytes)
                             + " bytes on " + where);
}

} // namespace am
