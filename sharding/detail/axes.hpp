/// Normalizing axis arguments the way numpy does (negative axes count from the end).
#pragma once

#include <cstdint>
#include <vector>

namespace am::detail {

/// `axis` in [-ndim, ndim) made non-negative; numpy's AxisError text otherwise
/// ("axis 2 is out of bounds for array of dimension 2").
std::int64_t normalize_axis(std::int64_t axis, std::int64_t ndim);

/// Every axis normalized, sorted, checked for repeats ("duplicate value in 'axis'").
std::vector<std::int64_t> normalize_axes(std::vector<std::int64_t> axes, std::int64_t ndim);

} // namespace am::detail
