/// A colocated call's values as they travel: a tree structure and its array leaves. The typed
/// wrappers flatten their arguments into one and rebuild their results from one; everything in
/// between (checks, the host side, a future wire format) sees only this.
#ifndef ACTORMESH_COLOCATED_DETAIL_FLAT_TREE_HPP
#define ACTORMESH_COLOCATED_DETAIL_FLAT_TREE_HPP

#include "actormesh/actors/errors.hpp"
#include "actormesh/multihost/tree.hpp"
#include "actormesh/multihost/tree_def.hpp"
#include "actormesh/sharding/array.hpp"

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace am::detail {

/// A tree of arrays, flattened.
struct flat_tree {
  tree_def def;              ///< the structure (a call's inputs: the tuple of its arguments)
  std::vector<array> leaves; ///< the arrays, in tree_for_each order
};

/// JAX's error for a value that is not an array: "colocated_python only supports jax.Array as
/// input and output, but got <class 'am::host_array'>."
[[noreturn]] void throw_not_an_array(std::string_view type_name);

/// The C++ name of a leaf type, for that error.
template <class L>
std::string leaf_type_name() {
  if constexpr (std::is_same_v<L, host_array>)
    return "am::host_array";
  else if constexpr (std::is_same_v<L, partition_spec>)
    return "am::partition_spec";
  else if constexpr (element_type<L>)
    return std::string(name(dtype_of<L>())) + " (a scalar)";
  else
    return "a sharding or spec";
}

/// Flattens a tree whose leaves must all be am::array; throws JAX's error for any other leaf.
template <class T>
flat_tree flatten_arrays(const T& tree) {
  flat_tree out{tree_structure(tree), {}};
  tree_for_each(tree, [&](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (std::is_same_v<L, array>)
      out.leaves.push_back(leaf);
    else
      throw_not_an_array(leaf_type_name<L>());
  });
  return out;
}

/// Rebuilds a T from a flat tree (am::value_error when `flat` has another structure).
template <class T>
T unflatten_arrays(const flat_tree& flat) {
  std::vector<tree_leaf> leaves(flat.leaves.begin(), flat.leaves.end());
  return tree_unflatten<T>(flat.def, std::span<const tree_leaf>(leaves));
}

} // namespace am::detail

#endif // ACTORMESH_COLOCATED_DETAIL_FLAT_TREE_HPP
