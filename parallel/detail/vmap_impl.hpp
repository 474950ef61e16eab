/// vmap's work inside a trace: trace the function on one example, then replay it batched.
#ifndef ACTORMESH_PARALLEL_DETAIL_VMAP_IMPL_HPP
#define ACTORMESH_PARALLEL_DETAIL_VMAP_IMPL_HPP

#include "actormesh/parallel/axis_spec.hpp"
#include "actormesh/parallel/detail/tracing.hpp"

#include <string>
#include <vector>

namespace am::detail {

/// `f` vectorized over `args` along `in_axes`, outputs placed by `out_axes`; collectives over
/// `axis_name` (if not empty) run across the mapped axis. Needs a current trace.
std::vector<array> vmap_traced(const array_function& f, const std::vector<array>& args, const axis_specs& in_axes,
                               const axis_specs& out_axes, const std::string& axis_name);

} // namespace am::detail

#endif // ACTORMESH_PARALLEL_DETAIL_VMAP_IMPL_HPP
