/// Internals shared by the host_array sources: numpy's shape checks, index normalization and the
/// wording of its index and shape errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actormesh/actors/errors.hpp"
#include "sharding/detail/axes.hpp" // normalize_axis

namespace am::detail {

/// numpy's C-level shape text (`convert_shape_to_string`): `(2,3)`, `(4,)`, `()`; leading negative
/// extents are dropped and later ones read `newaxis`, so messages match numpy's exactly.
inline std::string numpy_shape_text(const std::vector<std::int64_t>& shape) {
  std::size_t i = 0;
  while (i < shape.size() && shape[i] < 0) ++i;
  if (i == shape.size()) return "()";
  std::string s = std::to_string(shape[i++]);
  for (; i < shape.size(); ++i) s += shape[i] < 0 ? std::string(",newaxis") : "," + std::to_string(shape[i]);
  return shape.size() == 1 ? "(" + s + ",)" : "(" + s + ")";
}

/// numpy's IndexError for too many indices (raised as value_error).
[[noreturn]] inline void throw_too_many_indices(std::size_t ndim, std::size_t given) {
  throw value_error("too many indices for array: array is " + std::to_string(ndim) + "-dimensional, but " +
                    std::to_string(given) + " were indexed");
}

/// An index into an axis of extent `extent`, negative counting from the end; numpy's IndexError
/// ("index 5 is out of bounds for axis 0 with size 2", raised as value_error) when outside.
inline std::int64_t normalize_index(std::int64_t index, std::int64_t axis, std::int64_t extent) {
  const std::int64_t k = index < 0 ? index + extent : index;
  if (k < 0 || k >= extent)
    throw value_error("index " + std::to_string(index) + " is out of bounds for axis " + std::to_string(axis) +
                      " with size " + std::to_string(extent));
  return k;
}

} // namespace am::detail
