/// host_local_array_to_global_array and global_array_to_host_local_array on one leaf, and the
/// matching of a pspecs tree to the inputs' structure. Internal.
#ifndef ACTORMESH_MULTIHOST_DETAIL_HOST_LOCAL_HPP
#define ACTORMESH_MULTIHOST_DETAIL_HOST_LOCAL_HPP

#include "actormesh/multihost/tree.hpp"
#include "actormesh/sharding/mesh.hpp"

#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// One process's local value (a host array, or a fully addressable array) as its part of the
/// global array laid out by NamedSharding(m, *spec); a non-fully-addressable array as is.
array host_local_leaf_to_global(const tree_leaf& leaf, const mesh& m, const std::optional<partition_spec>& spec);

/// The part of global array `x` on this process's devices, as an array over the local mesh;
/// a fully addressable array as is.
array global_leaf_to_host_local(const array& x, const mesh& m, const std::optional<partition_spec>& spec);

/// A host leaf (JAX's numpy input) taken as the global value: its part on this process's devices,
/// as global_leaf_to_host_local gives it for the array of that value laid out by `spec` (in one
/// process, that array itself).
array host_leaf_to_host_local(const tree_leaf& leaf, const mesh& m, const std::optional<partition_spec>& spec);

/// Refuses a structure of pspecs that is not the inputs' (am::value_error naming both).
void check_pspecs_structure(const std::string& what, const tree_def& inputs, const tree_def& pspecs);

/// One spec per leaf: a single spec (or None) applies to every leaf; a tree of specs must have the
/// inputs' structure.
template <class Specs>
std::vector<std::optional<partition_spec>> flatten_pspecs(const std::string& what, const Specs& pspecs,
                                                          const tree_def& inputs) {
  auto one = [](const auto& s) -> std::optional<partition_spec> {
    using S = std::remove_cvref_t<decltype(s)>;
    static_assert(spec_leaf<S>, "pspecs: the leaves of a pspecs tree are partition specs (or None)");
    if constexpr (std::same_as<S, partition_spec>)
      return s;
    else if constexpr (std::same_as<S, none_t>)
      return std::nullopt;
    else
      return s;
  };
  if constexpr (spec_leaf<Specs>) {
    return std::vector<std::optional<partition_spec>>(inputs.num_leaves(), one(pspecs));
  } else {
    check_pspecs_structure(what, inputs, tree_structure(pspecs));
    std::vector<std::optional<partition_spec>> out;
    tree_for_each(pspecs, [&](const auto& s) { out.push_back(one(s)); });
    return out;
  }
}

} // namespace am::detail

#endif // ACTORMESH_MULTIHOST_DETAIL_HOST_LOCAL_HPP
