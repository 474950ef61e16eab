/// The exceptions actormesh raises, named and worded after JAX's where JAX has one.
#ifndef ACTORMESH_ACTORS_ERRORS_HPP
#define ACTORMESH_ACTORS_ERRORS_HPP

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

/// A process of the cluster died, stopped answering, or left: raised on every survivor by whatever
/// waited on it (barriers, collectives, calls to its devices, the join). JAX: ProcessFailureError.
/// `process` is the failed process's index (-1 when the coordinator itself is gone and the failed
/// process is not known); `devices` lists the global ids of its devices.
class process_failure_error : public runtime_error {
public:
  process_failure_error(const std::string& what, int process, std::vector<int> devices = {})
      : runtime_error(what), process_(process), devices_(std::move(devices)) {}
  int process() const noexcept { return process_; }
  const std::vector<int>& failed_devices() const noexcept { return devices_; }

private:
  int process_;
  std::vector<int> devices_;
};

/// Processes of the cluster disagree on what they are doing together: different collectives (op,
/// shape, dtype, name) as the same step of a communicator, different barrier names, or different
/// builds at join. The message names who issued what.
class desync_error : public runtime_error {
public:
  using runtime_error::runtime_error;
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

#endif // ACTORMESH_ACTORS_ERRORS_HPP
