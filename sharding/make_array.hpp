/// Building a global array from its pieces, as JAX's jax.make_array_from_callback and
/// jax.make_array_from_single_device_arrays: the way a multi-controller program creates an array
/// whose shards live in several processes, each process providing its own devices' blocks.
#ifndef ACTORMESH_SHARDING_MAKE_ARRAY_HPP
#define ACTORMESH_SHARDING_MAKE_ARRAY_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/index_map.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <functional>
#include <vector>

namespace am {

/// Returns the data of one block of the global array (its extents: the block's).
using block_callback = std::function<host_array(const shard_index& block)>;

/// The global array of `shape` laid out by `s`, whose blocks come from `data_callback`, called once
/// per block held by this process's devices (once per distinct block: replicas share the bytes).
/// Throws am::value_error when a block comes back with another shape, or a dtype differing from
/// the first block's.
array make_array_from_callback(const shape_t& shape, const sharding_ptr& s, const block_callback& data_callback);

/// The global array of `shape` laid out by `s`, from one single-device array per device of `s`
/// that belongs to this process (in any order), each holding that device's block. Throws
/// am::value_error when a device is missing or given twice, a piece is not on exactly one device,
/// or a piece's shape or dtype is not its block's.
array make_array_from_single_device_arrays(const shape_t& shape, const sharding_ptr& s,
                                           const std::vector<array>& arrays);

} // namespace am

#endif // ACTORMESH_SHARDING_MAKE_ARRAY_HPP
