// Dot instructions to test (CPU and GPU): the program of one batched or 2-D, maybe transposed,
// product, and small integer inputs, exact in every dtype and in every accumulation order.
#pragma once

#include "actormesh/actors/program.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace am::testing {

/// `n` values in [lowest, lowest + 4], varied by `seed`.
inline std::vector<double> small_integers(std::int64_t n, int seed, double lowest = -2.0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<double>((i * 7 + seed * 3) % 5) + lowest;
  return v;
}

/// One dot instruction and its inputs: x and y as values, the program taking them.
struct dot_case {
  std::shared_ptr<const program> p;
  shape_t x_shape, y_shape;
  std::vector<double> x, y;
};

/// `batch` products (0: a 2-D dot) of [m,k] and [k,n], y shared unless `y_batched`, stored
/// transposed where `tx` / `ty`; inputs from 0 for uint8 (no wrapping), else from -2.
inline dot_case make_dot_case(dtype t, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n,
                              bool y_batched, bool tx, bool ty) {
  dot_case c;
  c.x_shape = tx ? shape_t{k, m} : shape_t{m, k};
  c.y_shape = ty ? shape_t{n, k} : shape_t{k, n};
  if (batch > 0) {
    c.x_shape.insert(c.x_shape.begin(), batch);
    if (y_batched)
      c.y_shape.insert(c.y_shape.begin(), batch);
  }
  program_builder b("dot_" + std::string(name(t)) + "_" + std::to_string(batch) + "_" + std::to_string(m) + "x"
                    + std::to_string(k) + "x" + std::to_string(n) + (tx ? "_tx" : "") + (ty ? "_ty" : ""));
  auto x = b.parameter({t, c.x_shape});
  b.output(b.dot(x, b.parameter({t, c.y_shape}), tx, ty));
  c.p = b.build();
  double lowest = t == dtype::uint8 ? 0.0 : -2.0;
  c.x = small_integers(element_count(c.x_shape), 1, lowest);
  c.y = small_integers(element_count(c.y_shape), 2, lowest);
  return c;
}

} // namespace am::testing
