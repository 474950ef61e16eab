/// A tree as the multihost utilities work on it: its leaves flattened, its structure, and which
/// leaves were C++ scalars (they print as Python scalars in messages). Internal.
#ifndef ACTORMESH_MULTIHOST_DETAIL_DATA_TREE_HPP
#define ACTORMESH_MULTIHOST_DETAIL_DATA_TREE_HPP

#include "actormesh/multihost/tree.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// A flattened tree of data.
struct data_tree {
  std::vector<tree_leaf> leaves;
  tree_def def;
  std::vector<bool> scalar; ///< per leaf: true when it was a C++ scalar
};

/// Flattens a tree of data, remembering its scalars.
template <class T>
data_tree flatten_data_tree(const T& t) {
  data_tree out;
  tree_for_each(t, [&](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    static_assert(data_leaf<L>, "the multihost utilities take trees of arrays, host arrays and scalars");
    out.leaves.push_back(to_tree_leaf(leaf));
    out.scalar.push_back(element_type<L>);
  });
  out.def = tree_structure(t);
  return out;
}

/// True for a global array some of whose shards live in other processes.
bool is_global_non_addressable(const tree_leaf& leaf);

/// The leaf's value in host memory: a host array as is, a (fully addressable) global array fetched.
host_array leaf_on_host(const tree_leaf& leaf);

/// `float32[4,2]` for a host leaf, `global float32[8,2]` for a non-fully-addressable array.
std::string leaf_signature(const tree_leaf& leaf);

/// The structure and every leaf's signature: what every process must pass alike.
std::string tree_signature(const data_tree& t);

} // namespace am::detail

#endif // ACTORMESH_MULTIHOST_DETAIL_DATA_TREE_HPP
