/// Pure index maths of shardings: which block of an array each device holds.
///
/// Every sharding reduces to a tile layout: each array dimension is cut into `partitions[d]` equal
/// blocks, and each device (in the sharding's assignment order) holds one tile, given by its tile
/// coordinates; devices holding the same tile are replicas. Everything here is plain computation on
/// shapes and names, with JAX's error wording (REFERENCE.md).
#ifndef ACTORMESH_SHARDING_INDEX_MAP_HPP
#define ACTORMESH_SHARDING_INDEX_MAP_HPP

#include "actormesh/sharding/mesh.hpp"
#include "actormesh/sharding/partition_spec.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace am {

/// A half-open range `[start, stop)` of one array dimension (a Python slice with step 1).
struct index_range {
  /// First element.
  std::int64_t start = 0;
  /// One past the last element.
  std::int64_t stop = 0;

  /// Number of elements.
  std::int64_t size() const noexcept { return stop - start; }

  /// Equal bounds.
  friend bool operator==(const index_range&, const index_range&) = default;
};

/// The block of an array one device holds: one range per dimension.
using shard_index = std::vector<index_range>;

/// `[0:2, 0:1]`: a shard index printed like numpy slices.
std::string to_string(const shard_index& index);

/// How a sharding cuts an array of a given rank into tiles and hands them to devices.
struct tile_layout {
  /// Per array dimension, into how many equal blocks it is cut (1 = not split).
  std::vector<std::int64_t> partitions;
  /// Per device position (in assignment order), the tile coordinates, one per dimension.
  std::vector<std::vector<std::int64_t>> tile_of;
};

/// Checks a spec against a mesh like `NamedSharding(mesh, spec)` does: a mesh axis used twice ->
/// am::duplicate_spec_error; an axis not in the mesh -> am::value_error ("Resource axis: z of
/// P('z',) is not found in mesh: ('x', 'y').").
void check_spec_for_mesh(const partition_spec& spec, const mesh& m);

/// Throws am::value_error when `spec` has more entries than `rank` ("Sharding <sharding_repr> is only
/// valid for values of rank at least N, but was applied to a value of rank M."; rank 0 adds " For
/// scalars the PartitionSpec should be P()").
void check_spec_rank(const partition_spec& spec, std::size_t rank, std::string_view sharding_repr);

/// The tile layout of a (checked) NamedSharding for arrays of rank `ndim` >= spec.size(): dimension d
/// is cut by the product of its mesh axes; a device's tile coordinate along d is the mixed-radix
/// number of its mesh coordinates on those axes (major first). Mesh axes of size 1 change nothing and
/// mesh axes the spec does not use are replication. Device positions are mesh-flat order.
tile_layout named_tile_layout(const mesh& m, const partition_spec& spec, std::size_t ndim);

/// The shard shape `shape[d] / partitions[d]`; throws am::indivisible_error ("Sharding <repr> implies
/// that array axis 0 is partitioned 4 times, but the dimension size is 6 (full shape: (6, 2),
/// per-dimension tiling factors: [4, 1] should evenly divide the shape)") when a dimension does not
/// divide. `shape` and `partitions` have the same length.
std::vector<std::int64_t> tiled_shard_shape(const std::vector<std::int64_t>& shape,
                                            const std::vector<std::int64_t>& partitions,
                                            std::string_view sharding_repr);

/// The index each device position holds: a split dimension gets `[i*q, (i+1)*q)` with q the shard
/// size, an unsplit one the full range. Checks divisibility like `tiled_shard_shape`.
std::vector<shard_index> tile_indices(const tile_layout& layout, const std::vector<std::int64_t>& shape,
                                      std::string_view sharding_repr);

/// Replica ids in position order: how many earlier positions hold the same index.
std::vector<int> replica_ids(const std::vector<shard_index>& indices);

} // namespace am

#endif // ACTORMESH_SHARDING_INDEX_MAP_HPP
