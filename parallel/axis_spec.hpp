/// One entry of in_axes / out_axes for vmap and pmap: a dim number (negative counts from the end)
/// or `am::none` (not mapped: broadcast as an input, the same everywhere as an output).
#ifndef ACTORMESH_PARALLEL_AXIS_SPEC_HPP
#define ACTORMESH_PARALLEL_AXIS_SPEC_HPP

#include "actormesh/sharding/partition_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace am {

/// An axis number or none.
struct axis_spec {
  std::optional<std::int64_t> axis;

  /// Mapped along `a`.
  axis_spec(int a) : axis(a) {}
  /// Mapped along `a`.
  axis_spec(std::int64_t a) : axis(a) {}
  /// Not mapped.
  axis_spec(none_t) {}
  /// Not mapped.
  axis_spec(std::nullopt_t) {}

  /// True when mapped.
  bool mapped() const noexcept { return axis.has_value(); }
};

/// in_axes or out_axes: one entry per argument (output), or one entry for all of them.
using axis_specs = std::vector<axis_spec>;

} // namespace am

#endif // ACTORMESH_PARALLEL_AXIS_SPEC_HPP
