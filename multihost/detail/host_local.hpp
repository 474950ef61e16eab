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

/// Refuses a structure of pspecs that is not a prefix of the inputs' (am::value_error naming both).
[[noreturn]] void throw_pspecs_structure(const std::string& what, const tree_def& inputs, const tree_def& pspecs);

/// A spec leaf as the spec it gives (None: none).
template <spec_leaf S>
std::optional<partition_spec> spec_of(const S& s) {
  if constexpr (std::same_as<S, none_t>)
    return std::nullopt;
  else
    return s;
}

/// Appends the specs of the leaves under `def` given by `specs`, a tree prefix of `def` (JAX's
/// flatten_axes): a spec leaf (or None) covers every leaf of its subtree, none under a None of
/// the inputs. Returns false where the containers differ.
template <class Specs>
bool flatten_spec_prefix(const Specs& specs, const tree_def& def, std::vector<std::optional<partition_spec>>& out) {
  using kind = tree_def::kind;
  if constexpr (spec_leaf<Specs>) {
    out.insert(out.end(), def.num_leaves(), spec_of(specs));
    return true;
  } else if constexpr (tuple_like<Specs>::value) {
    if (def.node_kind() != kind::tuple || def.children().size() != std::tuple_size_v<Specs>)
      return false;
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (flatten_spec_prefix(std::get<I>(specs), def.children()[I], out) && ...);
    }(std::make_index_sequence<std::tuple_size_v<Specs>>{});
  } else if constexpr (list_like<Specs>::value) {
    if (def.node_kind() != kind::list || def.children().size() != specs.size())
      return false;
    for (std::size_t k = 0; k < specs.size(); ++k)
      if (!flatten_spec_prefix(specs[k], def.children()[k], out))
        return false;
    return true;
  } else if constexpr (dict_like<Specs>::value) {
    if (def.node_kind() != kind::dict || def.children().size() != specs.size())
      return false;
    std::size_t k = 0;
    for (const auto& [key, s] : specs) {
      if (key != def.keys()[k] || !flatten_spec_prefix(s, def.children()[k], out))
        return false;
      ++k;
    }
    return true;
  } else {
    static_assert(dependent_false<Specs>, "pspecs: the leaves of a pspecs tree are partition specs (or None)");
  }
}

/// One spec per leaf of `inputs`: a single spec (or None) applies to every leaf; a tree of specs
/// is a prefix of the inputs' structure, as JAX's pspecs (each spec covers its subtree).
template <class Specs>
std::vector<std::optional<partition_spec>> flatten_pspecs(const std::string& what, const Specs& pspecs,
                                                          const tree_def& inputs) {
  std::vector<std::optional<partition_spec>> out;
  if (!flatten_spec_prefix(pspecs, inputs, out))
    throw_pspecs_structure(what, inputs, tree_structure(pspecs));
  return out;
}

} // namespace am::detail

#endif // ACTORMESH_MULTIHOST_DETAIL_HOST_LOCAL_HPP
