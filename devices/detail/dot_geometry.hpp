/// The shapes of one dot instruction (actors/opcode.hpp), read once for every executor: `batch`
/// products (1 for a 2-D dot) of x [m,k] and y [k,n], row-major; y is one matrix shared by every
/// product unless `y_batched`; `transpose_x` / `transpose_y`: that operand is stored [k,m] / [n,k].
/// Internal.
#pragma once

#include <cstdint>
#include <vector>

namespace am::detail {

/// See the file comment.
struct dot_geometry {
  std::int64_t batch = 1, m = 0, k = 0, n = 0;
  bool y_batched = false, transpose_x = false, transpose_y = false;
};

/// The geometry of a dot instruction with operands of shapes `x` and `y` and attrs `attrs` (empty,
/// or the two transpose flags); the shapes are the validated ones of a built program.
inline dot_geometry dot_geometry_of(const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& y,
                                    const std::vector<std::int64_t>& attrs) {
  dot_geometry g;
  g.transpose_x = !attrs.empty() && attrs[0] == 1;
  g.transpose_y = attrs.size() > 1 && attrs[1] == 1;
  auto r = x.size();
  g.batch = r == 3 ? x[0] : 1;
  g.y_batched = y.size() == 3;
  g.m = g.transpose_x ? x[r - 1] : x[r - 2];
  g.k = g.transpose_x ? x[r - 2] : x[r - 1];
  g.n = g.transpose_y ? y[y.size() - 2] : y.back();
  return g;
}

} // namespace am::detail
