#include "sharding/detail/block_copy.hpp"

#include "actormesh/actors/errors.hpp"

#include <cstring>

namespace am::detail {

namespace {

/// Calls `row(src_offset, dst_offset, bytes)` for each contiguous row of `block` inside an array
/// of `shape`, in row-major order; offsets are in bytes, `packed` counts in the block.
template <class Row>
void for_each_row(const shape_t& shape, const shard_index& block, std::size_t elem, Row&& row) {
  auto rank = shape.size();
  if (rank == 0) {
    row(0, 0, elem);
    return;
  }
  std::vector<std::int64_t> strides(rank, 1);
  for (std::size_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * shape[d];
  auto row_len = static_cast<std::size_t>(block[rank - 1].size()) * elem;
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < rank; ++d)
    rows *= block[d].size();
  if (row_len == 0 || rows == 0)
    return;
  std::vector<std::int64_t> pos(rank, 0);
  std::size_t packed = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t offset = block[rank - 1].start;
    for (std::size_t d = 0; d + 1 < rank; ++d)
      offset += (block[d].start + pos[d]) * strides[d];
    row(static_cast<std::size_t>(offset) * elem, packed, row_len);
    packed += row_len;
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++pos[d] < block[d].size())
        break;
      pos[d] = 0;
    }
  }
}

} // namespace

shape_t extents(const shard_index& block) {
  shape_t s;
  for (auto& r : block)
    s.push_back(r.size());
  return s;
}

std::vector<std::byte> copy_block_out(const host_array& src, const shard_index& block) {
  auto elem = size_of(src.dtype());
  std::vector<std::byte> out(static_cast<std::size_t>(element_count(extents(block))) * elem);
  auto* base = src.bytes().data();
  for_each_row(src.shape(), block, elem, [&](std::size_t from, std::size_t to, std::size_t n) {
    std::memcpy(out.data() + to, base + from, n);
  });
  return out;
}

void copy_block_in(host_array& dst, const shard_index& block, const std::vector<std::byte>& bytes) {
  auto elem = size_of(dst.dtype());
  if (bytes.size() != static_cast<std::size_t>(element_count(extents(block))) * elem)
    throw runtime_error("internal: a shard's bytes do not match its block");
  auto* base = dst.bytes().data();
  for_each_row(dst.shape(), block, elem, [&](std::size_t to, std::size_t from, std::size_t n) {
    std::memcpy(base + to, bytes.data() + from, n);
  });
}

} // namespace am::detail
