/// A global array whose blocks are written in place on their devices: how restore_checkpoint reads
/// each file straight into its shard, with no host copy in between. Internal.
#pragma once

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/index_map.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <cstddef>
#include <functional>

namespace am::detail {

/// Writes the elements of `block` (row-major, `size` bytes) at `destination`.
using block_writer = std::function<void(const shard_index& block, std::byte* destination, std::size_t size)>;

/// The global array of `shape` and `type` laid out by `s`. `write` runs once per shard held by this
/// process's devices (a replicated block once per replica), on that device's thread: concurrently
/// for different devices, so it must not share unguarded state. An exception it throws fails that
/// shard's future (seen at the first wait on the array).
array make_array_from_block_writer(const shape_t& shape, am::dtype type, const sharding_ptr& s, block_writer write);

} // namespace am::detail
