#include "actormesh/multihost/detail/collect.hpp"
#include "actormesh/multihost/multihost_errors.hpp"

#include "actormesh/devices/runtime.hpp"
#include "actormesh/sharding/host_array_print.hpp"

namespace am::detail {

namespace {

/// How Python shows a leaf: str() for the whole tree being one value, repr() inside containers;
/// a C++ scalar prints as the Python scalar either way.
std::string leaf_text(const host_array& h, bool top, bool scalar) {
  return top || scalar ? to_string(h) : repr(h);
}

std::string input_leaf_text(const data_tree& t, std::size_t k, bool top) {
  const auto& leaf = t.leaves[k];
  if (is_global_non_addressable(leaf))
    return std::get<array>(leaf).to_string();
  return leaf_text(leaf_on_host(leaf), top, t.scalar[k]);
}

} // namespace

void assert_equal_leaves(const data_tree& t, const std::string& fail_message) {
  auto gathered = allgather_leaves(t, /*tiled=*/true);
  const std::int64_t processes = process_count();
  bool equal = true;
  for (std::size_t k = 0; k < t.leaves.size() && equal; ++k) {
    // A non-fully-addressable array is one value over the processes: it agrees by construction
    // (JAX compares its first local shard with its full value instead).
    if (is_global_non_addressable(t.leaves[k]))
      continue;
    host_array mine = leaf_on_host(t.leaves[k]);
    const std::int64_t n = mine.size();
    host_array all = gathered[k].reshape({processes, n});
    host_array flat_mine = mine.reshape({n});
    for (std::int64_t r = 0; r < processes && equal; ++r)
      equal = array_equal(all[r], flat_mine, /*equal_nan=*/true);
  }
  if (equal)
    return;
  std::string expected = t.def.format([&](std::size_t k, bool top) { return leaf_text(gathered[k], top, false); });
  std::string got = t.def.format([&](std::size_t k, bool top) { return input_leaf_text(t, k, top); });
  throw assertion_error(fail_message + ". Expected: " + expected + "; got: " + got + ".");
}

} // namespace am::detail
