/// Copying a block of a host array out to contiguous bytes and back in.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/index_map.hpp"

#include <cstddef>
#include <vector>

namespace am::detail {

/// The extents of a block.
shape_t extents(const shard_index& block);

/// The elements of `block` of `src`, row-major, as bytes.
std::vector<std::byte> copy_block_out(const host_array& src, const shard_index& block);

/// Writes row-major `bytes` holding `block` into `dst`.
void copy_block_in(host_array& dst, const shard_index& block, const std::vector<std::byte>& bytes);

} // namespace am::detail
