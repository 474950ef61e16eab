/// The structure of a tree without its leaves (JAX's PyTreeDef): which containers hold what, the
/// lengths of lists and the keys of dicts. Plain data: compared, printed, and used to rebuild a tree.
#ifndef ACTORMESH_MULTIHOST_TREE_DEF_HPP
#define ACTORMESH_MULTIHOST_TREE_DEF_HPP

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace am {

/// One node of a tree's structure. A leaf is `*`; containers are tuples (std::tuple, std::pair,
/// std::array), lists (std::vector) and dicts (std::map with string keys, keys in sorted order);
/// `None` (am::none in a tree of data) is a node without children, as in JAX.
class tree_def {
public:
  /// What a node is.
  enum class kind { leaf, tuple, list, dict, none };

  /// A single leaf (`PyTreeDef(*)`).
  tree_def() = default;

  /// The structure of a leaf.
  static tree_def leaf() { return {}; }

  /// JAX's None: a node with no children and no leaves (`PyTreeDef(None)`).
  static tree_def none();

  /// A container node; `keys` (dicts only) has one key per child.
  static tree_def node(kind k, std::vector<tree_def> children, std::vector<std::string> keys = {});

  /// The node's kind.
  kind node_kind() const noexcept { return kind_; }

  /// The children (empty for a leaf and for empty containers).
  const std::vector<tree_def>& children() const noexcept { return children_; }

  /// The keys of a dict, in order; empty otherwise.
  const std::vector<std::string>& keys() const noexcept { return keys_; }

  /// The number of leaves below (1 for a leaf).
  std::size_t num_leaves() const noexcept { return leaves_; }

  /// JAX's repr: `PyTreeDef((*, [*, *], {'a': *}))`.
  std::string to_string() const;

  /// The tree printed as Python prints the same nested tuples, lists and dicts, each leaf given by
  /// `leaf_text(k, top)`: k counts leaves in order, `top` is true only when the whole tree is one
  /// leaf (Python prints a lone value with str() and values inside containers with repr()).
  std::string format(const std::function<std::string(std::size_t leaf, bool top)>& leaf_text) const;

  /// Same kinds, lengths and keys everywhere.
  friend bool operator==(const tree_def&, const tree_def&) = default;

private:
  kind kind_ = kind::leaf;
  std::vector<tree_def> children_;
  std::vector<std::string> keys_;
  std::size_t leaves_ = 1;
};

} // namespace am

#endif // ACTORMESH_MULTIHOST_TREE_DEF_HPP
