/// Which devices a colocated call runs on: the one device list all its inputs share, or the
/// specialized one; and whether this process can run it.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actormesh/sharding/array.hpp"

#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// The devices of a call with these array inputs: `specialized` when given (the inputs must then
/// be on the same set of devices), else the device list every input uses. Throws am::value_error
/// with JAX's wording for inputs on different device lists ("All arguments must use the same
/// device list, but got multiple device lists: ...") and for no inputs and no devices ("No devices
/// found. colocated_python function without input arguments must be first specialized with
/// devices.").
std::vector<device> call_devices(const std::vector<array>& inputs, const std::optional<std::vector<device>>& specialized);

/// Throws unless the call can run here: every device a CPU device (am::value_error) of this
/// process (am::runtime_error: running colocated code in another process is not built yet).
void check_runs_here(const std::vector<device>& devices);

/// Throws am::value_error unless every output is on the call's set of devices.
void check_output_devices(const std::vector<array>& outputs, const std::vector<device>& devices);

/// The sorted, distinct ids of `devices`: a call's set of devices whatever their order (a
/// specialized function takes its inputs in any order; an object keeps one instance per set).
std::vector<int> device_id_set(const std::vector<device>& devices);

/// `[CpuDevice(id=0), CpuDevice(id=1)]`.
std::string device_list_text(const std::vector<device>& devices);

} // namespace am::detail
