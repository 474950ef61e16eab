/// Across the processes of a multi-controller cluster, every process calls a pmap with its own
/// arguments; this checks that they called it alike before any slice is placed. Internal.
#pragma once

#include "actors/device_info.hpp"
#include "parallel/axis_spec.hpp"
#include "sharding/array.hpp"

#include <functional>
#include <string>
#include <vector>

namespace am::detail {

/// What every process must agree on for one pmap call: axis name, devices, in_axes (normalized),
/// out_axes and each argument's dtype and shape ("pmap(axis_name='i', devices [0, 1], in_axes (0),
/// out_axes (0)) of (float32[2,3])").
std::string pmap_signature(const std::string& axis_name, const std::vector<device>& devices,
                           const axis_specs& in_axes, const axis_specs& out_axes, const std::vector<array>& args);

/// When `devices` span several processes of a multi-controller cluster, sends `signature` to the
/// supervisor's collective check against every other process of them and returns the wait for
/// its answer (one round trip, which the caller overlaps with dispatching the call): a mismatch
/// raises am::desync_error from the wait on every one of them, naming who passed what, instead of
/// a transfer timeout or a silent computation on another region; a process that never calls
/// raises am::timeout_error on the others at the collective timeout; both with the flight
/// recorder's dump. A wait that does nothing in local mode, in a single-controller cluster or
/// when the devices are all this process's.
std::function<void()> start_pmap_agreement(const std::vector<device>& devices, const std::string& signature);

} // namespace am::detail
