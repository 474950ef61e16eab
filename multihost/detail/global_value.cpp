#include "multihost/detail/global_value.hpp"

#include "actormesh/actors/errors.hpp"
#include "actormesh/devices/runtime.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace am::detail {

namespace {

/// Copies the rows of `block` into `dst` one dimension at a time (the last dimension in one run).
void copy_rows(std::byte* dst, const std::vector<std::int64_t>& dst_strides, const std::byte* src,
               const std::vector<std::int64_t>& src_strides, const shard_index& index, std::size_t dim,
               std::size_t item) {
  const auto& r = index[dim];
  if (dim + 1 == index.size()) {
    std::memcpy(dst + r.start * dst_strides[dim], src, static_cast<std::size_t>(r.size()) * item);
    return;
  }
  for (std::int64_t i = 0; i < r.size(); ++i)
    copy_rows(dst + (r.start + i) * dst_strides[dim], dst_strides, src + i * src_strides[dim], src_strides, index,
              dim + 1, item);
}

std::vector<std::int64_t> byte_strides(const std::vector<std::int64_t>& shape, std::size_t item) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t acc = static_cast<std::int64_t>(item);
  for (std::size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}

/// A block as an ordered key.
std::vector<std::int64_t> key_of(const shard_index& index) {
  std::vector<std::int64_t> k;
  for (auto& r : index) {
    k.push_back(r.start);
    k.push_back(r.stop);
  }
  return k;
}

std::int64_t block_elements(const shard_index& index) {
  std::int64_t n = 1;
  for (auto& r : index)
    n *= r.size();
  return n;
}

} // namespace

void insert_block(const host_array& dst, const shard_index& index, const host_array& block) {
  if (block.dtype() != dst.dtype() || static_cast<std::size_t>(dst.ndim()) != index.size())
    throw value_error("insert_block: block and destination disagree");
  if (dst.ndim() == 0) {
    std::memcpy(dst.bytes().data(), block.bytes().data(), dst.nbytes());
    return;
  }
  if (block.size() == 0)
    return;
  const std::size_t item = size_of(dst.dtype());
  copy_rows(dst.bytes().data(), byte_strides(dst.shape(), item), block.bytes().data(),
            byte_strides(block.shape(), item), index, 0, item);
}

host_array gather_global_value(communicator& comm, const array& x) {
  const auto& shape = x.shape();
  const std::size_t item = size_of(x.dtype());
  // The owner of each distinct block: the process of the lowest-id device holding it (placements
  // come in device-id order). Every process computes the same plan from the sharding.
  struct owned {
    shard_index index;
    int device_id;
  };
  std::map<std::vector<std::int64_t>, bool> seen;
  std::vector<std::vector<owned>> by_process(static_cast<std::size_t>(comm.size()));
  for (auto& pl : x.sharding()->shard_placements(shape)) {
    if (!seen.emplace(key_of(pl.index), true).second)
      continue;
    auto rank = std::find(comm.processes().begin(), comm.processes().end(), pl.device.process_index)
                - comm.processes().begin();
    if (rank == static_cast<std::ptrdiff_t>(comm.processes().size()))
      throw value_error("process_allgather: the array has devices of process "
                        + std::to_string(pl.device.process_index) + ", which is not in the communicator");
    by_process[static_cast<std::size_t>(rank)].push_back({pl.index, pl.device.id});
  }
  std::vector<std::size_t> bytes(by_process.size(), 0);
  for (std::size_t p = 0; p < by_process.size(); ++p)
    for (auto& o : by_process[p])
      bytes[p] += static_cast<std::size_t>(block_elements(o.index)) * item;
  const std::size_t slot = *std::max_element(bytes.begin(), bytes.end());
  host_array out = host_array::empty(shape, x.dtype());
  if (slot == 0)
    return out;
  // This process's blocks, packed in plan order.
  std::vector<std::byte> mine(slot);
  std::size_t at = 0;
  auto shards = x.addressable_shards();
  for (auto& o : by_process[static_cast<std::size_t>(comm.rank())]) {
    auto it = std::find_if(shards.begin(), shards.end(), [&](const shard& s) { return s.device.id == o.device_id; });
    if (it == shards.end())
      throw runtime_error("process_allgather: the shard on device " + std::to_string(o.device_id)
                          + " is not addressable here");
    host_array block = shard_data(x, *it).to_host();
    std::memcpy(mine.data() + at, block.bytes().data(), block.nbytes());
    at += block.nbytes();
  }
  std::vector<std::byte> all(slot * by_process.size());
  comm.all_gather(mine.data(), all.data(), slot, dtype::uint8);
  for (std::size_t p = 0; p < by_process.size(); ++p) {
    std::size_t off = p * slot;
    for (auto& o : by_process[p]) {
      std::vector<std::int64_t> ext;
      for (auto& r : o.index)
        ext.push_back(r.size());
      const std::size_t n = static_cast<std::size_t>(block_elements(o.index)) * item;
      host_array block = host_array::from_bytes({all.data() + off, n}, x.dtype(), ext);
      insert_block(out, o.index, block);
      off += n;
    }
  }
  return out;
}

} // namespace am::detail
