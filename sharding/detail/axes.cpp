#include "sharding/detail/axes.hpp"

#include "actormesh/actors/errors.hpp"

#include <algorithm>
#include <string>

namespace am::detail {

std::int64_t normalize_axis(std::int64_t axis, std::int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of dimension "
                      + std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<std::int64_t> normalize_axes(std::vector<std::int64_t> axes, std::int64_t ndim) {
  for (auto& a : axes)
    a = normalize_axis(a, ndim);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw value_error("duplicate value in 'axis'");
  return axes;
}

} // namespace am::detail
