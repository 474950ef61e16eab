#include "actormesh/multihost/detail/host_local.hpp"

#include "actormesh/devices/runtime.hpp"
#include "actormesh/multihost/detail/data_tree.hpp"
#include "actormesh/multihost/local_mesh.hpp"
#include "actormesh/sharding/make_array.hpp"
#include "actormesh/sharding/named_sharding.hpp"

namespace am::detail {

namespace {

void refuse_none(const std::optional<partition_spec>& spec) {
  if (!spec)
    throw value_error("`None` is not a valid input to the pspecs argument. Please use PartitionSpec() if you "
                      "wanted to replicate your input.");
}

/// Per dimension, how many times the mesh axes of `spec` split it in `m`.
std::int64_t split_factor(const mesh& m, const partition_spec& spec, std::size_t dim) {
  std::int64_t f = 1;
  if (dim < spec.size())
    for (auto& axis : spec[dim].axes())
      f *= m.axis_size(axis);
  return f;
}

/// `shape` with every dimension scaled from the splits of `from` to those of `to`.
std::vector<std::int64_t> rescale(const std::vector<std::int64_t>& shape, const partition_spec& spec, const mesh& from,
                                  const mesh& to) {
  std::vector<std::int64_t> out = shape;
  for (std::size_t d = 0; d < shape.size(); ++d)
    out[d] = shape[d] / split_factor(from, spec, d) * split_factor(to, spec, d);
  return out;
}

std::vector<host_array::slice_spec> slices_of(const shard_index& index) {
  std::vector<host_array::slice_spec> out;
  for (auto& r : index)
    out.push_back({r.start, r.stop, 1});
  return out;
}

std::vector<array> shard_arrays(const array& x) {
  std::vector<array> pieces;
  for (auto& s : x.addressable_shards())
    pieces.push_back(shard_data(x, s));
  return pieces;
}

} // namespace

array host_local_leaf_to_global(const tree_leaf& leaf, const mesh& m, const std::optional<partition_spec>& spec) {
  refuse_none(spec);
  if (is_global_non_addressable(leaf))
    return std::get<array>(leaf);
  const mesh local = local_mesh(m, process_index());
  auto local_s = make_named_sharding(local, *spec);
  auto global_s = make_named_sharding(m, *spec);
  const std::vector<std::int64_t> local_shape = std::holds_alternative<array>(leaf)
                                                    ? std::get<array>(leaf).shape()
                                                    : std::get<host_array>(leaf).shape();
  local_s->check_compatible(local_shape);
  (void)local_s->shard_shape(local_shape); // JAX's indivisible error, on the local shape
  const auto global_shape = rescale(local_shape, *spec, local, m);
  std::vector<array> pieces;
  if (std::holds_alternative<array>(leaf) && std::get<array>(leaf).sharding()->is_equivalent_to(*local_s, local_shape.size())) {
    pieces = shard_arrays(std::get<array>(leaf)); // no copy: the shards' buffers are shared
  } else {
    host_array data = leaf_on_host(leaf);
    for (auto& [dev, index] : local_s->devices_indices_map(local_shape))
      pieces.push_back(device_put(local_shape.empty() ? data : data.slice(slices_of(index)), dev));
  }
  return make_array_from_single_device_arrays(global_shape, global_s, pieces);
}

array global_leaf_to_host_local(const array& x, const mesh& m, const std::optional<partition_spec>& spec) {
  refuse_none(spec);
  if (x.is_fully_addressable())
    return x;
  auto global_s = make_named_sharding(m, *spec);
  array arranged = x.sharding()->is_equivalent_to(*global_s, x.shape().size()) ? x : device_put(x, global_s);
  const mesh local = local_mesh(m, process_index());
  auto local_s = make_named_sharding(local, *spec);
  const auto local_shape = rescale(arranged.shape(), *spec, m, local);
  return make_array_from_single_device_arrays(local_shape, local_s, shard_arrays(arranged));
}

array host_leaf_to_host_local(const tree_leaf& leaf, const mesh& m, const std::optional<partition_spec>& spec) {
  refuse_none(spec);
  return global_leaf_to_host_local(device_put(leaf_on_host(leaf), make_named_sharding(m, *spec)), m, spec);
}

void throw_pspecs_structure(const std::string& what, const tree_def& inputs, const tree_def& pspecs) {
  throw value_error(what + ": pspecs must be one PartitionSpec or a tree prefix of the inputs' structure "
                    + inputs.to_string() + ", but its structure is " + pspecs.to_string());
}

} // namespace am::detail
