/// Python-style text for error messages and reprs: JAX's wording embeds Python reprs (`'x'`, `(6, 2)`,
/// `[4, 1]`), and users compare our messages with JAX's, so we print the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace am::detail {

/// Python's `repr(str)`: single quotes unless the text holds a single quote and no double quote,
/// backslashes and the chosen quote escaped.
std::string py_repr(std::string_view text);

/// Python's repr of a tuple of already formatted items: `()`, `('x',)`, `('x', 'y')`.
std::string py_tuple(const std::vector<std::string>& items);

/// Python's repr of a tuple of integers: `()`, `(6,)`, `(6, 2)`.
std::string py_int_tuple(const std::vector<std::int64_t>& values);

/// Python's repr of a list of integers: `[]`, `[4]`, `[4, 1]`.
std::string py_int_list(const std::vector<std::int64_t>& values);

/// Floor division with Python's rounding (towards negative infinity); `b` must not be 0.
constexpr std::int64_t py_floordiv(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

/// Modulo with Python's sign rule (the result has the sign of `b`); `b` must not be 0.
constexpr std::int64_t py_mod(std::int64_t a, std::int64_t b) noexcept {
  return a - py_floordiv(a, b) * b;
}

/// Python 3's `round(x)` for a float: to the nearest integer, ties to even.
std::int64_t py_round(double x) noexcept;

} // namespace am::detail
