#include "actormesh/sharding/make_array.hpp"
#include "actormesh/actors/shape.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/calls.hpp"
#include "sharding/detail/addressable.hpp"
#include "sharding/detail/array_state.hpp"
#include "sharding/detail/block_copy.hpp"
#include "sharding/detail/block_writer_array.hpp"
#include "actormesh/sharding/detail/trace.hpp"

#include <cstring>
#include <map>
#include <optional>

namespace am {

namespace {

array assemble(const shape_t& shape, am::dtype type, const sharding_ptr& s, std::vector<shard> shards) {
  auto st = std::make_shared<detail::array_state>();
  st->shape = shape;
  st->type = type;
  st->layout = s;
  st->set_shards(std::move(shards));
  return array(std::move(st));
}

/// A block as an ordered key (index_range has no order of its own).
std::vector<std::int64_t> block_key(const shard_index& block) {
  std::vector<std::int64_t> key;
  for (auto& r : block) {
    key.push_back(r.start);
    key.push_back(r.stop);
  }
  return key;
}

/// The array of `shape` whose shards on this process's devices are uploads written by
/// `writer_for(block)`; the other processes' shards are remote.
template <class WriterFor>
array place_blocks(const shape_t& shape, am::dtype type, const sharding_ptr& s,
                   const std::vector<shard_placement>& placements, WriterFor&& writer_for) {
  std::vector<shard> shards;
  for (auto& pl : placements) {
    if (!detail::is_addressable(pl.device)) {
      shards.push_back({pl.device, pl.index, pl.replica_id, detail::remote_shard(pl.device)});
      continue;
    }
    auto fut = upload_written(pl.device, {type, detail::extents(pl.index)}, writer_for(pl.index));
    shards.push_back({pl.device, pl.index, pl.replica_id, std::move(fut)});
  }
  return assemble(shape, type, s, std::move(shards));
}

void check_not_tracing(const char* what) {
  if (detail::current_trace() != nullptr)
    throw value_error(std::string(what) + " inside jit is not supported: pass the array as an argument");
}

} // namespace

array make_array_from_callback(const shape_t& shape, const sharding_ptr& s, const block_callback& data_callback) {
  if (!s)
    throw value_error("make_array_from_callback: no sharding given");
  check_not_tracing("make_array_from_callback");
  s->check_compatible(shape);
  std::optional<am::dtype> type;
  std::map<std::vector<std::int64_t>, std::shared_ptr<const std::vector<std::byte>>> blocks; // distinct blocks
  auto placements = s->shard_placements(shape);
  for (auto& pl : placements) {
    if (!detail::is_addressable(pl.device))
      continue;
    auto& bytes = blocks[block_key(pl.index)];
    if (!bytes) {
      auto data = data_callback(pl.index);
      if (data.shape() != detail::extents(pl.index))
        throw value_error("make_array_from_callback: the callback returned shape " + shape_to_string(data.shape())
                          + " for the block " + to_string(pl.index) + " of shape "
                          + shape_to_string(detail::extents(pl.index)));
      if (type && *type != data.dtype())
        throw value_error("make_array_from_callback: the callback returned dtype "
                          + std::string(am::name(data.dtype())) + " for the block " + to_string(pl.index)
                          + " but " + std::string(am::name(*type)) + " for an earlier one");
      type = data.dtype();
      bytes = std::make_shared<const std::vector<std::byte>>(data.bytes().begin(), data.bytes().end());
    }
  }
  if (!type)
    throw value_error("make_array_from_callback: this process holds no block of the array, so the dtype is "
                      "unknown; every process must own at least one device of the sharding");
  // The callback's bytes were copied once above (the caller may change its host arrays as soon as
  // this returns); each device copies them from there into its shard.
  return place_blocks(shape, *type, s, placements, [&blocks](const shard_index& block) -> buffer_writer {
    return [bytes = blocks[block_key(block)]](std::byte* destination, std::size_t size) {
      if (size > 0)
        std::memcpy(destination, bytes->data(), size);
    };
  });
}

namespace detail {

array make_array_from_block_writer(const shape_t& shape, am::dtype type, const sharding_ptr& s, block_writer write) {
  if (!s)
    throw value_error("make_array_from_block_writer: no sharding given");
  check_not_tracing("make_array_from_block_writer");
  s->check_compatible(shape);
  auto shared = std::make_shared<block_writer>(std::move(write));
  return place_blocks(shape, type, s, s->shard_placements(shape), [&shared](const shard_index& block) -> buffer_writer {
    return [shared, block](std::byte* destination, std::size_t size) { (*shared)(block, destination, size); };
  });
}

} // namespace detail

array make_array_from_single_device_arrays(const shape_t& shape, const sharding_ptr& s,
                                           const std::vector<array>& arrays) {
  if (!s)
    throw value_error("make_array_from_single_device_arrays: no sharding given");
  check_not_tracing("make_array_from_single_device_arrays");
  s->check_compatible(shape);
  std::map<int, shard> by_device;
  std::optional<am::dtype> type;
  for (auto& a : arrays) {
    auto pieces = detail::concrete_state(a).shards();
    if (pieces->size() != 1)
      throw value_error("make_array_from_single_device_arrays: every array must be on exactly one device; "
                        + a.to_string() + " has " + std::to_string(pieces->size()) + " shards");
    auto& piece = pieces->front();
    if (type && *type != a.dtype())
      throw value_error("make_array_from_single_device_arrays: arrays of dtypes " + std::string(am::name(*type))
                        + " and " + std::string(am::name(a.dtype())) + " were given");
    type = a.dtype();
    if (!by_device.emplace(piece.device.id, piece).second)
      throw value_error("make_array_from_single_device_arrays: two arrays are on " + to_string(piece.device));
  }
  std::vector<shard> shards;
  std::size_t used = 0;
  for (auto& pl : s->shard_placements(shape)) {
    if (!detail::is_addressable(pl.device)) {
      shards.push_back({pl.device, pl.index, pl.replica_id, detail::remote_shard(pl.device)});
      continue;
    }
    auto it = by_device.find(pl.device.id);
    if (it == by_device.end())
      throw value_error("make_array_from_single_device_arrays: no array was given for " + to_string(pl.device)
                        + ", which holds the block " + to_string(pl.index));
    auto& piece = it->second;
    auto want = detail::extents(pl.index);
    if (detail::extents(piece.index) != want)
      throw value_error("make_array_from_single_device_arrays: the array on " + to_string(pl.device)
                        + " has shape " + shape_to_string(detail::extents(piece.index)) + " but its block "
                        + to_string(pl.index) + " has shape " + shape_to_string(want));
    shards.push_back({pl.device, pl.index, pl.replica_id, piece.data});
    ++used;
  }
  if (used != by_device.size())
    throw value_error("make_array_from_single_device_arrays: " + std::to_string(by_device.size() - used)
                      + " of the arrays are on devices that hold no block of this process's part of the sharding");
  if (!type)
    throw value_error("make_array_from_single_device_arrays: no arrays were given");
  return assemble(shape, *type, s, std::move(shards));
}

} // namespace am
