/// Across the processes of a multi-controller cluster, every process calls a pmap with its own
/// arguments; this checks that they called it alike before any slice is placed. Internal.
#pragma once

#include "actors/device_info.hpp"
#include "parallel/axis_spec.hpp"
#include "sharding/array.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// What every process must agree on for one pmap call: axis name, devices, in_axes (normalized),
/// out_axes and each argument's dtype and shape ("pmap(axis_name='i', devices [0, 1], in_axes (0),
/// out_axes (0)) of (float32[2,3])").
std::string pmap_signature(const std::string& axis_name, const std::vector<device>& devices,
                           const axis_specs& in_axes, const axis_specs& out_axes, const std::vector<array>& args);

/// When `devices` span several processes of a multi-controller cluster, checks `signature` against
/// every other process of them through the supervisor's collective check (one round trip): a
/// mismatch raises am::desync_error on every one of them at once, naming who passed what, instead
/// of a transfer timeout or a silent computation on another region. A process that never calls
/// raises am::timeout_error on the others at the collective timeout. Nothing in local mode, in a
/// single-controller cluster or when the devices are all this process's.
void check_pmap_agreement(const std::vector<device>& devices, const std::string& signature);

} // namespace am::detail
