/// The batching rules of collectives: over the mapped axis, a collective becomes operations across
/// dim 0 (reductions, a gather of every slice, rows taken from other slices); over another axis it
/// is recorded again with its dims shifted past dim 0.
#pragma once

#include "parallel/detail/batching.hpp"
#include "actormesh/sharding/detail/graph.hpp"

#include <vector>

namespace am::detail {

/// Replays collective node `n` on `in` (empty for axis_index).
batched batch_collective(const node& n, const std::vector<batched>& in, const batch_axis& axis);

} // namespace am::detail
