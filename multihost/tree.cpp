#include "actormesh/multihost/tree.hpp"

namespace am::detail {

void throw_tree_mismatch(const tree_def& found, const std::string& expected) {
  throw value_error("tree_unflatten: the structure " + found.to_string() + " does not fit the type: expected "
                    + expected + " there");
}

tree_leaf checked_leaf(std::span<const tree_leaf> leaves, std::size_t k) {
  if (k >= leaves.size())
    throw value_error("tree_unflatten: too few leaves (" + std::to_string(leaves.size()) + ")");
  return leaves[k];
}

} // namespace am::detail
