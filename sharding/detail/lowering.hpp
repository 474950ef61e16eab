/// Lowering: a graph of whole-array operations becomes per-shard programs, one per device and stage.
///
/// Every node is computed on each device of its sharding for the block that device holds. A device
/// that needs a block it does not hold assembles it from the pieces other devices hold: each piece is
/// sliced on the device that has it (only the needed part moves), then imported by the consumer one
/// stage later and concatenated into place. Reductions reduce each block locally, then combine the
/// partial results device to device. Stages only exist where data crosses devices, so a purely
/// elementwise function is one program per device: one message per shard.
#pragma once

#include "actormesh/sharding/detail/graph.hpp"
#include "actormesh/sharding/detail/plan.hpp"

#include <string>

namespace am::detail {

/// Lowers `g`; its input nodes describe the arguments (shape, dtype, sharding).
plan lower(const graph& g, const std::string& name);

} // namespace am::detail
