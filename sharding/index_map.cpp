#include "actormesh/sharding/index_map.hpp"

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/py_format.hpp"
#include "actormesh/sharding/sharding_errors.hpp"

#include <algorithm>
#include <map>

namespace am {

std::string to_string(const shard_index& index) {
  std::string out = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(index[i].start) + ":" + std::to_string(index[i].stop);
  }
  return out + "]";
}

void check_spec_for_mesh(const partition_spec& spec, const mesh& m) {
  // DuplicateSpecError first, as JAX's check_pspec does.
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  bool duplicate = false;
  for (const auto& axis : spec.used_axes()) {
    auto& c = counts[axis];
    if (c == 0)
      order.push_back(axis);
    else
      duplicate = true;
    ++c;
  }
  if (duplicate) {
    // mesh_lib.show_axes: sorted backquoted names joined by ", ".
    std::vector<std::string> shown;
    for (const auto& axis : order)
      if (counts[axis] > 1)
        shown.push_back("`" + axis + "`");
    std::sort(shown.begin(), shown.end());
    std::string list;
    for (std::size_t i = 0; i < shown.size(); ++i)
      list += (i > 0 ? ", " : "") + shown[i];
    throw duplicate_spec_error(
        "A single NamedSharding spec specification can map every mesh axis to at most one positional "
        "dimension, but " +
        spec.to_string() + " has duplicate entries for " + list);
  }
  for (const auto& axis : spec.used_axes())
    if (!m.axis_index(axis))
      throw value_error("Resource axis: " + axis + " of " + spec.to_string() +
                        " is not found in mesh: " + m.axis_names_repr() + ".");
}

void check_spec_rank(const partition_spec& spec, std::size_t rank, std::string_view sharding_repr) {
  if (rank >= spec.size())
    return;
  throw value_error("Sharding " + std::string(sharding_repr) + " is only valid for values of rank at least " +
                    std::to_string(spec.size()) + ", but was applied to a value of rank " +
                    std::to_string(rank) + "." + (rank == 0 ? " For scalars the PartitionSpec should be P()" : ""));
}

tile_layout named_tile_layout(const mesh& m, const partition_spec& spec, std::size_t ndim) {
  tile_layout out;
  out.partitions.assign(ndim, 1);
  // Per dimension, the mesh axis positions it is split over, major first.
  std::vector<std::vector<std::size_t>> dim_axes(ndim);
  for (std::size_t d = 0; d < spec.size() && d < ndim; ++d)
    for (const auto& name : spec[d].axes()) {
      const auto axis = m.axis_index(name);
      if (!axis)
        throw value_error("Resource axis: " + name + " of " + spec.to_string() + " is not found in mesh: " +
                          m.axis_names_repr() + ".");
      dim_axes[d].push_back(*axis);
      out.partitions[d] *= m.axis_sizes()[*axis];
    }
  const auto& sizes = m.axis_sizes();
  std::vector<std::int64_t> coords(sizes.size(), 0);
  out.tile_of.reserve(m.size());
  for (std::size_t pos = 0; pos < m.size(); ++pos) {
    std::vector<std::int64_t> tile(ndim, 0);
    for (std::size_t d = 0; d < ndim; ++d)
      for (auto axis : dim_axes[d])
        tile[d] = tile[d] * sizes[axis] + coords[axis];
    out.tile_of.push_back(std::move(tile));
    // Advance the row-major mesh coordinates.
    for (std::size_t k = sizes.size(); k-- > 0;) {
      if (++coords[k] < sizes[k])
        break;
      coords[k] = 0;
    }
  }
  return out;
}

std::vector<std::int64_t> tiled_shard_shape(const std::vector<std::int64_t>& shape,
                                            const std::vector<std::int64_t>& partitions,
                                            std::string_view sharding_repr) {
  if (shape.size() != partitions.size())
    throw value_error("tiled_shard_shape: shape " + detail::py_int_tuple(shape) + " and tiling factors " +
                      detail::py_int_list(partitions) + " differ in rank");
  std::vector<std::int64_t> out;
  out.reserve(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto p = partitions[d];
    if (shape[d] < 0)
      throw value_error("negative dimensions are not allowed: " + detail::py_int_tuple(shape));
    if (p <= 0 || shape[d] % p != 0)
      throw indivisible_error("Sharding " + std::string(sharding_repr) + " implies that array axis " +
                              std::to_string(d) + " is partitioned " + std::to_string(p) +
                              " times, but the dimension size is " + std::to_string(shape[d]) +
                              " (full shape: " + detail::py_int_tuple(shape) +
                              ", per-dimension tiling factors: " + detail::py_int_list(partitions) +
                              " should evenly divide the shape)");
    out.push_back(shape[d] / p);
  }
  return out;
}

std::vector<shard_index> tile_indices(const tile_layout& layout, const std::vector<std::int64_t>& shape,
                                      std::string_view sharding_repr) {
  const auto block = tiled_shard_shape(shape, layout.partitions, sharding_repr);
  std::vector<shard_index> out;
  out.reserve(layout.tile_of.size());
  for (const auto& tile : layout.tile_of) {
    shard_index index(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (layout.partitions[d] == 1)
        index[d] = {0, shape[d]};
      else
        index[d] = {tile[d] * block[d], (tile[d] + 1) * block[d]};
    }
    out.push_back(std::move(index));
  }
  return out;
}

std::vector<int> replica_ids(const std::vector<shard_index>& indices) {
  std::map<std::vector<std::int64_t>, int> seen;
  std::vector<int> out;
  out.reserve(indices.size());
  for (const auto& index : indices) {
    std::vector<std::int64_t> key;
    key.reserve(index.size() * 2);
    for (const auto& r : index) {
      key.push_back(r.start);
      key.push_back(r.stop);
    }
    out.push_back(seen[key]++);
  }
  return out;
}

} // namespace am
