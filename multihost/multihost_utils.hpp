/// JAX's jax.experimental.multihost_utils in C++: synchronizing and communicating across the
/// processes of a multi-controller cluster. Every process calls these in the same order (they are
/// collectives over all processes, run by the collectives engine, whose participants check each
/// other's calls);
/// each takes a tree (multihost/tree.hpp) and returns one. REFERENCE.md has the semantics;
/// doc/multihost_utilities.md the examples.
///
/// Common errors: am::value_error on every process when the processes pass trees of different
/// structure, shapes or dtypes; am::timeout_error naming the processes that did not arrive within
/// the collective timeout (AM_COLLECTIVE_TIMEOUT); am::process_failure_error when a process died.
#ifndef ACTORMESH_MULTIHOST_MULTIHOST_UTILS_HPP
#define ACTORMESH_MULTIHOST_MULTIHOST_UTILS_HPP

#include "actormesh/multihost/detail/collect.hpp"
#include "actormesh/multihost/detail/data_tree.hpp"
#include "actormesh/multihost/detail/host_local.hpp"
#include "actormesh/multihost/multihost_errors.hpp"
#include "actormesh/multihost/tree.hpp"
#include "actormesh/sharding/mesh.hpp"

#include <optional>
#include <string>

namespace am::multihost {

/// Every leaf becomes the source process's value (process 0 unless `is_source` says which: exactly
/// one process may pass true, else am::value_error on every process). Dtypes are kept; scalars
/// stay scalars, host arrays host arrays, global arrays (fully addressable) come back as host
/// arrays. Each leaf must have the same shape and dtype on every process. One process: a copy.
/// On the source, returned host arrays share the input's memory (host arrays share like numpy views).
template <class Tree>
auto broadcast_one_to_all(const Tree& in_tree, std::optional<bool> is_source = std::nullopt) {
  auto flat = detail::flatten_data_tree(in_tree);
  auto out = detail::broadcast_leaves(flat, is_source);
  std::size_t k = 0;
  return tree_map(
      [&](const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        host_array& h = out[k++];
        if constexpr (element_type<L>)
          return h.template item<L>();
        else
          return h;
      },
      in_tree);
}

/// Every process's leaves, gathered into host arrays: stacked on a new axis 0 (shape (P, ...),
/// tiled=false) or concatenated along axis 0 (tiled=true); a scalar always becomes shape (P,).
/// A global array that is not fully addressable gives its full value with tiled=true; with
/// tiled=false it is refused on every process with am::value_error ("Gathering global
/// non-fully-addressable arrays only supports tiled=True").
template <class Tree>
auto process_allgather(const Tree& in_tree, bool tiled = false) {
  auto flat = detail::flatten_data_tree(in_tree);
  auto out = detail::allgather_leaves(flat, tiled);
  std::size_t k = 0;
  return tree_map([&](const auto&) { return out[k++]; }, in_tree);
}

/// Checks that every process holds the same tree of values; otherwise every process throws
/// am::assertion_error("{fail_message}. Expected: {gathered}; got: {in_tree}."), printed as Python
/// prints them. Values compare as numpy's equal does, except that NaN equals NaN here.
template <class Tree>
void assert_equal(const Tree& in_tree, const std::string& fail_message = "") {
  detail::assert_equal_leaves(detail::flatten_data_tree(in_tree), fail_message);
}

/// A barrier across every process: they compare the CRC-32 of `name`, and a mismatch throws
/// am::assertion_error on every process ("sync_global_devices name mismatch ('name'). Expected:
/// [...]; got: ..."). Unlike JAX it has a timeout (the collective timeout), and its error names the
/// processes that did not arrive.
void sync_global_devices(const std::string& name);

/// Each process's local data (a tree of host arrays, fully addressable arrays or scalars) becomes
/// its part of a global array laid out by NamedSharding(global_mesh, pspec): along a dimension
/// split over mesh axes A, global size = local size / (A's size in the local mesh) * (A's size in
/// the mesh). `pspecs` is one partition_spec for every leaf or a tree of them that is a prefix of
/// the inputs' structure (a spec covers its whole subtree, as in JAX); None (am::none, an empty
/// optional) where a leaf needs a spec is refused with JAX's message. A None in the inputs stays
/// None. The processes'
/// devices must form contiguous subcubes of the mesh (see local_mesh). A non-fully-addressable
/// array is returned as is; an array already laid out as NamedSharding(local_mesh, pspec) is
/// reused without a copy (its shards' buffers are shared).
template <class Tree, class Specs>
auto host_local_array_to_global_array(const Tree& local_inputs, const mesh& global_mesh, const Specs& pspecs) {
  auto flat = detail::flatten_data_tree(local_inputs);
  auto specs = detail::flatten_pspecs("host_local_array_to_global_array", pspecs, flat.def);
  std::size_t k = 0;
  return tree_map(
      [&](const auto&) {
        const std::size_t i = k++;
        return detail::host_local_leaf_to_global(flat.leaves[i], global_mesh, specs[i]);
      },
      local_inputs);
}

/// The inverse: each global array's part on this process's devices, as an array over the local
/// mesh (global size / (A's size in the mesh) * (A's size in the local mesh)), sharing the
/// shards' buffers; an array not laid out as NamedSharding(global_mesh, pspec) is resharded first.
/// A fully addressable array is returned as is. A host array or scalar leaf (JAX's numpy input) is
/// taken as the global value: its part on this process's devices, laid out by its pspec.
template <class Tree, class Specs>
auto global_array_to_host_local_array(const Tree& global_inputs, const mesh& global_mesh, const Specs& pspecs) {
  auto specs = detail::flatten_pspecs("global_array_to_host_local_array", pspecs, tree_structure(global_inputs));
  std::size_t k = 0;
  return tree_map(
      [&](const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        static_assert(data_leaf<L>, "global_array_to_host_local_array takes a tree of arrays, host arrays and scalars");
        if constexpr (std::same_as<L, array>)
          return detail::global_leaf_to_host_local(leaf, global_mesh, specs[k++]);
        else
          return detail::host_leaf_to_host_local(to_tree_leaf(leaf), global_mesh, specs[k++]);
      },
      global_inputs);
}

} // namespace am::multihost

#endif // ACTORMESH_MULTIHOST_MULTIHOST_UTILS_HPP
