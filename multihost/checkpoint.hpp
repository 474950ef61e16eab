/// Checkpoints of trees of sharded arrays: every process writes the blocks its devices hold, one
/// process writes the index, and a checkpoint restores onto any sharding and any process count.
///
/// On disk, a directory: one numpy .npy file per distinct block (`<leaf>/<start>-<stop>_....npy`,
/// numpy.load reads each) and `index.json` (the tree's structure, each leaf's dtype and shape,
/// and its blocks). The index is written last (to a temporary name, then renamed), so a checkpoint
/// whose save did not finish never looks complete. doc/multihost_utilities.md has the format.
#ifndef ACTORMESH_MULTIHOST_CHECKPOINT_HPP
#define ACTORMESH_MULTIHOST_CHECKPOINT_HPP

#include "actormesh/multihost/detail/data_tree.hpp"
#include "actormesh/multihost/tree.hpp"

#include <string>
#include <vector>

namespace am::detail {
/// save_checkpoint on a flattened tree.
void save_checkpoint_leaves(const std::string& directory, const data_tree& tree);
/// restore_checkpoint onto flattened shardings.
std::vector<array> restore_checkpoint_leaves(const std::string& directory, const tree_def& def,
                                             const std::vector<sharding_ptr>& shardings);
} // namespace am::detail

namespace am::multihost {

/// Saves `tree` (global arrays, host arrays, scalars; host values are written by process 0 as
/// one block) into `directory`, created when missing; a complete checkpoint there is replaced
/// (its index is removed first). Collective: every process calls it with the same tree and the
/// same directory (a file system all processes share). Returns once the checkpoint is complete
/// on every process. Throws am::runtime_error naming the process when a write fails.
template <class Tree>
void save_checkpoint(const std::string& directory, const Tree& tree) {
  am::detail::save_checkpoint_leaves(directory, am::detail::flatten_data_tree(tree));
}

/// Restores the checkpoint in `directory` as global arrays laid out by `shardings` (a tree of
/// the saved structure whose leaves are shardings: any kind, any mesh, any process count); each
/// process reads only the files holding its devices' blocks. Throws am::value_error when the
/// checkpoint is incomplete ("... holds no complete checkpoint ..."), a file is missing or
/// truncated, or the structure or a leaf's rank differs.
template <class Shardings>
auto restore_checkpoint(const std::string& directory, const Shardings& shardings) {
  std::vector<sharding_ptr> flat;
  tree_for_each(shardings, [&](const auto& s) {
    static_assert(sharding_leaf<std::remove_cvref_t<decltype(s)>>, "restore_checkpoint: a tree of shardings");
    flat.push_back(s);
  });
  auto arrays = am::detail::restore_checkpoint_leaves(directory, tree_structure(shardings), flat);
  std::size_t k = 0;
  return tree_map([&](const auto&) { return arrays[k++]; }, shardings);
}

/// True when `directory` holds a complete checkpoint (its index).
bool checkpoint_exists(const std::string& directory);

} // namespace am::multihost

#endif // ACTORMESH_MULTIHOST_CHECKPOINT_HPP
