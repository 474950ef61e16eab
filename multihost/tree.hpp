/// Trees of values, as JAX's pytrees: containers (std::tuple, std::pair, std::array, std::vector,
/// std::map with string keys) nested to any depth, whose leaves are global arrays, host arrays,
/// scalars (any element type: bool, std::uint8_t, std::int32_t, std::int64_t, float16, bfloat16,
/// float, double), partition specs or shardings. am::none is JAX's None: an empty node, kept in
/// place by tree_map and skipped by tree_flatten. Every multihost utility takes and returns trees.
///
///     std::tuple<am::host_array, std::map<std::string, float>> t{x, {{"lr", 0.1f}}};
///     am::tree_structure(t).to_string();           // PyTreeDef((*, {'lr': *}))
///     auto doubled = am::tree_map([](const auto& v) { return v; }, t);
///     auto [leaves, def] = am::tree_flatten(t);    // leaves: host arrays and global arrays
#ifndef ACTORMESH_MULTIHOST_TREE_HPP
#define ACTORMESH_MULTIHOST_TREE_HPP

#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/multihost/tree_def.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/host_array.hpp"
#include "actormesh/sharding/partition_spec.hpp"

#include <array>
#include <concepts>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace am {

/// A leaf holding data: a scalar, a host array or a global array.
template <class T>
concept data_leaf = std::same_as<T, host_array> || std::same_as<T, array> || element_type<T>;

/// A leaf of a tree of partition specs (JAX's pspecs argument): a spec, or None (refused where
/// JAX refuses it) spelled am::none or an empty std::optional.
template <class T>
concept spec_leaf = std::same_as<T, partition_spec> || std::same_as<T, none_t>
                    || std::same_as<T, std::optional<partition_spec>>;

namespace detail {
template <class T>
struct sharding_handle : std::false_type {};
template <class S>
struct sharding_handle<std::shared_ptr<const S>> : std::bool_constant<std::is_base_of_v<sharding, S>> {};
} // namespace detail

/// A leaf of a tree of shardings (where restored arrays go): a shared pointer to any sharding kind.
template <class T>
concept sharding_leaf = detail::sharding_handle<T>::value;

/// Anything that is a leaf of a tree.
template <class T>
concept tree_leaf_type = data_leaf<T> || spec_leaf<T> || sharding_leaf<T>;

/// A data leaf once flattened: scalars become 0-d host arrays.
using tree_leaf = std::variant<host_array, array>;

namespace detail {

template <class T>
struct tuple_like : std::false_type {};
template <class... Ts>
struct tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct tuple_like<std::pair<A, B>> : std::true_type {};
template <class T, std::size_t N>
struct tuple_like<std::array<T, N>> : std::true_type {};

template <class T>
struct pair_like : std::false_type {};
template <class A, class B>
struct pair_like<std::pair<A, B>> : std::true_type {};

template <class T>
struct std_array_like : std::false_type {};
template <class T, std::size_t N>
struct std_array_like<std::array<T, N>> : std::true_type {};

template <class T>
struct list_like : std::false_type {};
template <class T, class A>
struct list_like<std::vector<T, A>> : std::true_type {};

template <class T>
struct dict_like : std::false_type {};
template <class T, class C, class A>
struct dict_like<std::map<std::string, T, C, A>> : std::true_type {};

template <class T>
inline constexpr bool dependent_false = false;

[[noreturn]] void throw_tree_mismatch(const tree_def& found, const std::string& expected);
tree_leaf checked_leaf(std::span<const tree_leaf> leaves, std::size_t k);

} // namespace detail

/// True when T is a tree: a leaf, or a supported container of trees.
template <class T>
inline constexpr bool is_tree_v = tree_leaf_type<T> || detail::tuple_like<T>::value || detail::list_like<T>::value
                                  || detail::dict_like<T>::value;

/// The structure of `t`.
template <class T>
tree_def tree_structure(const T& t) {
  if constexpr (std::same_as<T, none_t>) {
    return tree_def::none();
  } else if constexpr (tree_leaf_type<T>) {
    return tree_def::leaf();
  } else if constexpr (detail::tuple_like<T>::value) {
    return std::apply(
        [](const auto&... e) { return tree_def::node(tree_def::kind::tuple, std::vector<tree_def>{tree_structure(e)...}); },
        t);
  } else if constexpr (detail::list_like<T>::value) {
    std::vector<tree_def> children;
    children.reserve(t.size());
    for (const auto& e : t)
      children.push_back(tree_structure(e));
    return tree_def::node(tree_def::kind::list, std::move(children));
  } else if constexpr (detail::dict_like<T>::value) {
    std::vector<tree_def> children;
    std::vector<std::string> keys;
    for (const auto& [k, v] : t) {
      keys.push_back(k);
      children.push_back(tree_structure(v));
    }
    return tree_def::node(tree_def::kind::dict, std::move(children), std::move(keys));
  } else {
    static_assert(detail::dependent_false<T>, "not a tree: leaves are am::array, am::host_array, scalars and "
                                              "partition specs; nodes std::tuple, std::pair, std::array, "
                                              "std::vector and std::map<std::string, ...>");
  }
}

/// Calls `f(leaf)` on every leaf of `t`, in order (tuples and lists front to back, dicts by key).
template <class T, class F>
void tree_for_each(const T& t, F&& f) {
  if constexpr (std::same_as<T, none_t>) {
    return; // None holds no leaves
  } else if constexpr (tree_leaf_type<T>) {
    f(t);
  } else if constexpr (detail::tuple_like<T>::value) {
    std::apply([&](const auto&... e) { (tree_for_each(e, f), ...); }, t);
  } else if constexpr (detail::list_like<T>::value) {
    for (const auto& e : t)
      tree_for_each(e, f);
  } else if constexpr (detail::dict_like<T>::value) {
    for (const auto& [k, v] : t)
      tree_for_each(v, f);
  } else {
    static_assert(detail::dependent_false<T>, "not a tree (see am::is_tree_v)");
  }
}

/// The tree of the same structure whose leaves are `f(leaf)`, leaves visited in tree_for_each's
/// order (so a counter in `f` walks the flattened leaves).
template <class T, class F>
auto tree_map(F&& f, const T& t) {
  if constexpr (std::same_as<T, none_t>) {
    return none_t{}; // None stays None, as in JAX
  } else if constexpr (tree_leaf_type<T>) {
    return f(t);
  } else if constexpr (detail::tuple_like<T>::value) {
    return std::apply(
        [&](const auto&... e) {
          // Braced initialization evaluates left to right: leaves are visited in order.
          if constexpr (detail::pair_like<T>::value)
            return std::pair<decltype(tree_map(f, e))...>{tree_map(f, e)...};
          else if constexpr (detail::std_array_like<T>::value)
            return std::array<decltype(tree_map(f, std::declval<const typename T::value_type&>())), sizeof...(e)>{
                tree_map(f, e)...};
          else
            return std::tuple<decltype(tree_map(f, e))...>{tree_map(f, e)...};
        },
        t);
  } else if constexpr (detail::list_like<T>::value) {
    std::vector<decltype(tree_map(f, std::declval<const typename T::value_type&>()))> out;
    out.reserve(t.size());
    for (const auto& e : t)
      out.push_back(tree_map(f, e));
    return out;
  } else if constexpr (detail::dict_like<T>::value) {
    std::map<std::string, decltype(tree_map(f, std::declval<const typename T::mapped_type&>()))> out;
    for (const auto& [k, v] : t)
      out.emplace(k, tree_map(f, v));
    return out;
  } else {
    static_assert(detail::dependent_false<T>, "not a tree (see am::is_tree_v)");
  }
}

/// The number of leaves of `t`.
template <class T>
std::size_t tree_num_leaves(const T& t) {
  std::size_t n = 0;
  tree_for_each(t, [&](const auto&) { ++n; });
  return n;
}

/// A data leaf as a flattened leaf: a scalar becomes a 0-d host array of its dtype.
template <data_leaf L>
tree_leaf to_tree_leaf(const L& value) {
  if constexpr (std::same_as<L, host_array> || std::same_as<L, array>)
    return value;
  else
    return host_array::scalar(value);
}

/// The leaves of a tree of data and its structure (JAX's tree_flatten).
template <class T>
std::pair<std::vector<tree_leaf>, tree_def> tree_flatten(const T& t) {
  std::vector<tree_leaf> leaves;
  tree_for_each(t, [&](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    static_assert(data_leaf<L>, "tree_flatten: only trees of arrays and scalars flatten into tree_leaf");
    leaves.push_back(to_tree_leaf(leaf));
  });
  return {std::move(leaves), tree_structure(t)};
}

namespace detail {

/// Rebuilds a T from `def` and the leaves from position `next` on.
template <class T>
T unflatten_node(const tree_def& def, std::span<const tree_leaf> leaves, std::size_t& next) {
  if constexpr (std::same_as<T, none_t>) {
    if (def.node_kind() != tree_def::kind::none)
      throw_tree_mismatch(def, "None");
    return none_t{};
  } else if constexpr (data_leaf<T>) {
    if (def.node_kind() != tree_def::kind::leaf)
      throw_tree_mismatch(def, "a leaf");
    tree_leaf v = checked_leaf(leaves, next++);
    if constexpr (std::same_as<T, array>) {
      if (!std::holds_alternative<array>(v))
        throw type_error("tree_unflatten: a host array cannot become an am::array leaf (use device_put)");
      return std::get<array>(v);
    } else {
      host_array h = std::holds_alternative<host_array>(v) ? std::get<host_array>(v) : std::get<array>(v).to_host();
      if constexpr (std::same_as<T, host_array>)
        return h;
      else
        return h.template item<T>();
    }
  } else if constexpr (tuple_like<T>::value) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    if (def.node_kind() != tree_def::kind::tuple || def.children().size() != n)
      throw_tree_mismatch(def, "a tuple of " + std::to_string(n));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{unflatten_node<std::tuple_element_t<I, T>>(def.children()[I], leaves, next)...};
    }(std::make_index_sequence<n>{});
  } else if constexpr (list_like<T>::value) {
    if (def.node_kind() != tree_def::kind::list)
      throw_tree_mismatch(def, "a list");
    T out;
    out.reserve(def.children().size());
    for (const auto& c : def.children())
      out.push_back(unflatten_node<typename T::value_type>(c, leaves, next));
    return out;
  } else if constexpr (dict_like<T>::value) {
    if (def.node_kind() != tree_def::kind::dict)
      throw_tree_mismatch(def, "a dict");
    T out;
    for (std::size_t k = 0; k < def.children().size(); ++k)
      out.emplace(def.keys()[k], unflatten_node<typename T::mapped_type>(def.children()[k], leaves, next));
    return out;
  } else {
    static_assert(dependent_false<T>, "tree_unflatten: T must be a tree of arrays and scalars");
  }
}

} // namespace detail

/// The T of structure `def` holding `leaves` (JAX's tree_unflatten): the inverse of tree_flatten.
/// Throws am::value_error when `def` is not a structure T can have or the leaf count differs, and
/// am::type_error when a host array would have to become a global array.
template <class T>
T tree_unflatten(const tree_def& def, std::span<const tree_leaf> leaves) {
  if (def.num_leaves() != leaves.size())
    throw value_error("tree_unflatten: " + def.to_string() + " has " + std::to_string(def.num_leaves())
                      + " leaves but " + std::to_string(leaves.size()) + " were given");
  std::size_t next = 0;
  return detail::unflatten_node<T>(def, leaves, next);
}

} // namespace am

#endif // ACTORMESH_MULTIHOST_TREE_HPP
