/// jax.device_put of a whole tree: every data leaf (an am::array, an am::host_array or a scalar)
/// put on one sharding, or each on its own sharding from a tree of shardings of the values'
/// structure.
///
///     std::map<std::string, am::host_array> params{{"w", w}, {"b", b}};
///     auto on_devices = am::device_put(params, sharding);          // std::map<std::string, am::array>
///     auto each = am::device_put(std::tuple{x, 1.5f}, std::tuple{s_x, s_scalar});
#ifndef ACTORMESH_MULTIHOST_TREE_DEVICE_PUT_HPP
#define ACTORMESH_MULTIHOST_TREE_DEVICE_PUT_HPP

#include "actormesh/multihost/tree.hpp"
#include "actormesh/sharding/array.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace am {

namespace detail {

/// A data leaf put on `s` (a scalar as a 0-d array of its type).
template <data_leaf L>
array put_leaf(const L& leaf, const sharding_ptr& s) {
  if constexpr (std::same_as<L, array> || std::same_as<L, host_array>)
    return device_put(leaf, s);
  else
    return device_put(host_array::scalar(leaf), s);
}

/// Refuses a tree of shardings whose structure is not the values' (am::value_error naming both).
void check_shardings_structure(const tree_def& values, const tree_def& shardings);

} // namespace detail

/// The tree of `values` with every data leaf put on `s`: the same containers, am::array leaves.
template <class Tree>
  requires(is_tree_v<Tree> && !tree_leaf_type<Tree>)
auto device_put(const Tree& values, const sharding_ptr& s) {
  return tree_map(
    [&](const auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      static_assert(data_leaf<L>, "device_put: the leaves of the values are arrays, host arrays or scalars");
      return detail::put_leaf(leaf, s);
    },
    values);
}

/// The tree of `values` with each data leaf put on the sharding at its place in `shardings` (a
/// tree of the same structure whose leaves are shardings); throws am::value_error when the
/// structures differ.
template <class Tree, class Shardings>
  requires(is_tree_v<Tree> && !tree_leaf_type<Tree> && is_tree_v<Shardings> && !tree_leaf_type<Shardings>)
auto device_put(const Tree& values, const Shardings& shardings) {
  detail::check_shardings_structure(tree_structure(values), tree_structure(shardings));
  std::vector<sharding_ptr> targets;
  tree_for_each(shardings, [&](const auto& s) {
    static_assert(sharding_leaf<std::remove_cvref_t<decltype(s)>>, "device_put: a tree of shardings");
    targets.push_back(s);
  });
  std::size_t k = 0;
  return tree_map(
    [&](const auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      static_assert(data_leaf<L>, "device_put: the leaves of the values are arrays, host arrays or scalars");
      return detail::put_leaf(leaf, targets[k++]);
    },
    values);
}

} // namespace am

#endif // ACTORMESH_MULTIHOST_TREE_DEVICE_PUT_HPP
