/// colocated_cpu_devices (jax.experimental.colocated_python.colocated_cpu_devices): the CPU device
/// on the same host as each given device, where colocated functions and objects run.
#ifndef ACTORMESH_COLOCATED_CPU_DEVICES_HPP
#define ACTORMESH_COLOCATED_CPU_DEVICES_HPP

#include "actormesh/actors/device_info.hpp"
#include "actormesh/sharding/mesh.hpp"

#include <vector>

namespace am {

/// The CPU device colocated with each of `devices`, in the same order (output i goes with input i).
/// A CPU device is its own colocated device; the CUDA device with local ordinal k of process p gets
/// process p's k-th CPU device (1:1, as XLA pairs them). Throws am::value_error with JAX's wording:
/// "No CPU devices found" (the cluster has none), "Device d has no colocated devices" (its process
/// has no CPU device) and "Process p does not have enough local CPU devices" (fewer CPU devices
/// than accelerators there).
///
///     auto cpus = am::colocated_cpu_devices(am::devices());   // [CpuDevice(id=0), ...]
std::vector<device> colocated_cpu_devices(const std::vector<device>& devices);

/// The CPU mesh of the same shape and axis names as `m`, each device replaced by its colocated CPU
/// device; the same errors.
mesh colocated_cpu_devices(const mesh& m);

/// Inside a colocated function's body or a colocated method: the devices the call runs on (its
/// array arguments' device list, or those of `specialize({.devices = ...})`), in their order, so a
/// body without inputs can put its outputs there (`am::device_put(h)` puts host data on the first
/// of them, `am::default_device()`). Throws am::value_error outside a colocated body.
///
///     auto make = am::colocated_python("make_zeros", [] {
///       return am::device_put(am::host_array::zeros({4}, am::dtype::float32));   // on the call's device
///     }).specialize({.devices = {cpus[0]}});
std::vector<device> colocated_devices();

} // namespace am

#endif // ACTORMESH_COLOCATED_CPU_DEVICES_HPP
