/// The full value of a global array whose shards live in several processes, on every process
/// (process_allgather with tiled=true of a non-fully-addressable array). Internal.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/host_array.hpp"

namespace am::detail {

/// Collective over `comm` (every process, the same array): each distinct block of `x` is sent by
/// one process, the one owning the lowest-id device that holds it, in one all-gather; every
/// process then assembles the whole array.
host_array gather_global_value(communicator& comm, const array& x);

/// Writes `block` (its extents: the index's) into `dst` at `index`.
void insert_block(const host_array& dst, const shard_index& index, const host_array& block);

} // namespace am::detail
