/// Across the processes of a multi-controller cluster, every process calls a pmap with its own
/// arguments; this checks that they called it alike before any slice is placed. Internal.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/sharding/array.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// When `devices` span several processes of a multi-controller cluster, checks that every other
/// process of them called this pmap alike (axis name, devices, in_axes (normalized), out_axes, each
/// argument's dtype and shape: "pmap(axis_name='i', devices [0, 2], in_axes (0), out_axes (None))
/// of (float64[2,4])") by an agreement among those processes (devices/collectives/agreements.hpp:
/// they exchange fingerprints, no round trip through the supervisor): a mismatch raises
/// am::desync_error on every one of them at once, naming who passed what ("pmap over devices
/// [0, 2], call 3 differs between processes (desync): ..."), instead of a transfer timeout or a
/// silent computation on another region. A process that never calls raises
/// am::timeout_error on the others at the collective timeout. Both write the flight recorder's
/// dump. Does nothing (and builds no signature) in local mode, in a single-controller cluster or
/// when the devices are all this process's.
void check_pmap_agreement(const std::string& axis_name, const std::vector<device>& devices, const axis_specs& in_axes,
                          const axis_specs& out_axes, const std::vector<array>& args);

} // namespace am::detail
