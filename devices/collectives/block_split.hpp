/// How a buffer is split into one block per rank, as numpy.array_split does: the first
/// count % parts blocks hold one element more than the others. reduce_scatter gives rank r block r.
#ifndef ACTORMESH_DEVICES_COLLECTIVES_BLOCK_SPLIT_HPP
#define ACTORMESH_DEVICES_COLLECTIVES_BLOCK_SPLIT_HPP

#include <cstddef>

namespace am {

/// A range of elements of a split buffer.
struct block_range {
  std::size_t offset = 0; ///< first element
  std::size_t count = 0;  ///< number of elements (0 when count < parts for the last blocks)
};

/// Block `index` (0 <= index < parts) of `count` elements split into `parts` blocks (parts >= 1).
constexpr block_range split_block(std::size_t count, int parts, int index) noexcept {
  const auto n = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = count / n;
  const std::size_t extra = count % n;
  return {i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

} // namespace am

#endif // ACTORMESH_DEVICES_COLLECTIVES_BLOCK_SPLIT_HPP
