/// What vmap and pmap share on the way in and out: the axis entries matched to the arguments, the
/// mapped size (with JAX's errors), and outputs placed by out_axes.
#pragma once

#include "actormesh/parallel/axis_spec.hpp"
#include "parallel/detail/batching.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// `specs` for `count` values: one per value, or the single entry repeated; else JAX's
/// "`what` in_axes specification must be a tree prefix ..." error.
std::vector<axis_spec> match_axes(const axis_specs& specs, std::size_t count, const char* what, const char* which);

/// The axes normalized against the arguments' ranks, with JAX's error for an axis out of range.
std::vector<axis_spec> normalize_in_axes(const std::vector<axis_spec>& axes, const std::vector<array>& args,
                                         const char* what);

/// The size of the mapped axis; JAX's errors when nothing is mapped or sizes differ.
std::int64_t mapped_size(const std::vector<axis_spec>& axes, const std::vector<array>& args, const char* what);

/// An output placed by its out_axes entry (a mapped one moved from dim 0 to `spec`, an unmapped
/// one broadcast first; none keeps an unmapped one and refuses a mapped one, as JAX does).
array place_output(const batched& out, const axis_spec& spec, const batch_axis& axis, const char* what);

} // namespace am::detail
