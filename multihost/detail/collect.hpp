/// The multihost utilities on flattened trees, behind the public templates of
/// multihost/multihost_utils.hpp. Internal.
#ifndef ACTORMESH_MULTIHOST_DETAIL_COLLECT_HPP
#define ACTORMESH_MULTIHOST_DETAIL_COLLECT_HPP

#include "actormesh/multihost/detail/data_tree.hpp"

#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// broadcast_one_to_all on leaves: every leaf's value on the source process, in host memory.
std::vector<host_array> broadcast_leaves(const data_tree& t, std::optional<bool> is_source);

/// process_allgather on leaves.
std::vector<host_array> allgather_leaves(const data_tree& t, bool tiled);

/// assert_equal on leaves.
void assert_equal_leaves(const data_tree& t, const std::string& fail_message);

} // namespace am::detail

#endif // ACTORMESH_MULTIHOST_DETAIL_COLLECT_HPP
