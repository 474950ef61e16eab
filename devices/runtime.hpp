/// Starting and stopping actormesh in a process, and asking it about devices (JAX's jax.devices()
/// family). One runtime is current per process at a time.
#ifndef ACTORMESH_DEVICES_RUNTIME_HPP
#define ACTORMESH_DEVICES_RUNTIME_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/devices/discovery.hpp"
#include "actormesh/devices/options.hpp"

#include <memory>
#include <string>
#include <vector>

namespace am {

namespace detail {
class runtime_impl;
}

/// The actor system of this process with its device actors and host actor. Constructing one starts
/// it and makes it current; destroying it (or `stop()`) stops it.
///
/// Stopping: new calls fail with am::runtime_error; every call still queued fails with
/// am::runtime_error (a thread blocked in to_host or get() on one wakes with that error); the call
/// each device is running finishes; stop() returns once every actor has exited (doc/runtime.md).
///
///     am::runtime rt(argc, argv);            // flags and AM_* variables apply
///     for (auto& d : am::devices()) fmt::print("{}\n", am::to_string(d));
class runtime {
public:
  /// Starts with options from code (highest precedence), the environment and defaults.
  explicit runtime(const options& in_code = {});

  /// Starts with `--am-*` flags from the command line as well; other arguments are left alone.
  runtime(int argc, const char* const* argv, const options& in_code = {});

  /// Stops the runtime if it is still running.
  ~runtime();

  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// The options in force.
  const resolved_options& config() const;

  /// What GPU discovery found, with the reason when no GPU is used.
  const gpu_report& gpus() const;

  /// Stops every actor of this runtime on this thread; idempotent and safe to call from several
  /// threads (each returns once the runtime has stopped). From inside one of the runtime's own host
  /// tasks it throws am::runtime_error instead of waiting for itself.
  void stop();

  /// A worker of a single-controller cluster (role worker): runs the controller's calls on this
  /// process's devices until the controller stops, then returns (stop the runtime after it).
  /// Throws am::process_failure_error when the controller is lost, am::runtime_error when this
  /// process is not a worker or the runtime stops meanwhile.
  ///
  ///     am::runtime rt(argc, argv);  // --am-role worker --am-coordinator HOST:PORT ...
  ///     rt.serve();
  void serve();

private:
  std::shared_ptr<detail::runtime_impl> impl_;
};

/// True while a runtime is current in this process.
bool is_running() noexcept;

/// The devices of the default platform (CUDA when GPUs are usable, else CPU), by id.
std::vector<device> devices();

/// The devices of one platform; throws am::runtime_error when that backend is not available.
std::vector<device> devices(platform p);

/// The default platform's devices owned by this process.
std::vector<device> local_devices();

/// Where host data goes when no device is named (`am::device_put(h)`, the host arguments of jit,
/// vmap and grad), as JAX's default device: this process's first device; inside a colocated
/// function or method, the first device of the call (am::colocated_devices).
device default_device();

/// Number of devices of the default platform.
int device_count();

/// Number of devices of the default platform owned by this process.
int local_device_count();

/// The index of this process in the cluster (0 in local mode).
int process_index();

/// The number of processes in the cluster (1 in local mode).
int process_count();

/// The default platform: cuda when GPUs are usable, else cpu.
platform default_platform();

/// Looks a device up by its global id; throws am::value_error for an unknown id.
device device_by_id(int id);

} // namespace am

#endif // ACTORMESH_DEVICES_RUNTIME_HPP
