/// What a colocated call's inputs and outputs look like without their data (JAX's
/// jax.ShapeDtypeStruct and a pytree of them): the input specs a function can be specialized on,
/// and what an out_specs_fn computes from them.
#ifndef ACTORMESH_COLOCATED_SPECS_HPP
#define ACTORMESH_COLOCATED_SPECS_HPP

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/shape.hpp"
#include "actormesh/colocated/detail/flat_tree.hpp"
#include "actormesh/multihost/tree_def.hpp"
#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/sharding.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace am {

/// One array's shape, dtype and sharding (jax.ShapeDtypeStruct).
struct shape_dtype_struct {
  shape_t shape;
  am::dtype dtype = am::dtype::float32;
  sharding_ptr sharding;

  /// The spec of an existing array.
  static shape_dtype_struct of(const array& a);

  /// `ShapeDtypeStruct(shape=(8,), dtype=float32, sharding=NamedSharding(...))`.
  std::string to_string() const;

  /// Same shape and dtype, and shardings that lay arrays of this rank out alike on the same
  /// devices in the same order.
  friend bool operator==(const shape_dtype_struct& a, const shape_dtype_struct& b);
};

/// A tree of specs: a tree structure (tree_def) and one spec per leaf, in tree_for_each order.
/// A call's inputs are the tuple of its arguments, so `in[0]` is the first argument's subtree.
///
///     auto in = am::spec_tree::of(std::tuple{x, y});   // the specs of a call f(x, y)
///     am::spec_tree out = in[0];                        // "the output looks like x"
class spec_tree {
public:
  /// The empty tuple `()`: no leaves.
  spec_tree();

  /// One leaf.
  spec_tree(shape_dtype_struct leaf); // NOLINT(google-explicit-constructor): a leaf is a tree

  /// A structure and its leaves; throws am::value_error when the counts differ.
  spec_tree(tree_def def, std::vector<shape_dtype_struct> leaves);

  /// A tuple of subtrees (`(a, b)`).
  static spec_tree tuple(const std::vector<spec_tree>& children);

  /// A list of subtrees (`[a, b]`).
  static spec_tree list(const std::vector<spec_tree>& children);

  /// The specs of a tree of arrays (every leaf must be an am::array).
  template <class T>
  static spec_tree of(const T& tree);

  /// The structure.
  const tree_def& def() const noexcept { return def_; }

  /// The leaves' specs.
  const std::vector<shape_dtype_struct>& leaves() const noexcept { return leaves_; }

  /// Number of children of the top node (0 for a leaf).
  std::size_t size() const noexcept { return def_.children().size(); }

  /// The subtree of child `k` of the top node; throws am::value_error when out of range.
  spec_tree operator[](std::size_t k) const;

  /// The tree printed like Python prints the same pytree of ShapeDtypeStructs.
  std::string to_string() const;

  /// Same structure and equal leaves.
  friend bool operator==(const spec_tree& a, const spec_tree& b) = default;

private:
  tree_def def_;
  std::vector<shape_dtype_struct> leaves_;
};

namespace detail {
/// The leaves' specs of a list of arrays.
std::vector<shape_dtype_struct> specs_of(const std::vector<array>& leaves);
} // namespace detail

template <class T>
spec_tree spec_tree::of(const T& tree) {
  auto flat = detail::flatten_arrays(tree);
  return spec_tree(std::move(flat.def), detail::specs_of(flat.leaves));
}

} // namespace am

#endif // ACTORMESH_COLOCATED_SPECS_HPP
