/// How a collective is recorded in a traced function's graph: a node of kind `collective` whose
/// attrs[0] names its description here. The pmap/vmap batching rewrite (batching.cpp) replaces it
/// by array operations over the mapped axis; grad differentiates it (autodiff.cpp).
#pragma once

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/detail/graph.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace am::detail {

/// Which collective.
enum class collective_kind : std::uint8_t { psum, pmean, pmax, pmin, all_gather, ppermute, psum_scatter, axis_index };

/// A collective's parameters.
struct collective {
  collective_kind kind = collective_kind::psum;
  std::string axis_name;
  std::int64_t axis_size = 0;
  std::int64_t axis = 0; ///< all_gather's axis, psum_scatter's scatter dimension
  bool tiled = false;
  std::vector<std::pair<int, int>> perm; ///< ppermute's (source, destination) pairs
};

/// JAX's name of a collective (`psum`, `all_gather`, ...).
const char* collective_name(collective_kind k) noexcept;

/// The description of a collective node.
const collective& collective_of(const node& n);

/// Records collective `c` on `operand` (none for axis_index) with result `shape` and `type`.
array record_collective(collective c, const std::vector<array>& operand, shape_t shape, am::dtype type,
                        sharding_ptr layout);

/// Calls the public collective described by `c` (same axis) on `x`, with `axis` in place of c.axis.
array call_collective(const collective& c, const array& x, std::int64_t axis);

} // namespace am::detail
