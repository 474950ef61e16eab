/// numpy's float text (its Dragon4 `format_float_positional` / `format_float_scientific` in "unique"
/// mode), for printing host arrays exactly as numpy does.
#pragma once

#include <string>

#include "actormesh/actors/dtype.hpp"

namespace am::detail {

/// A finite value as decimal digits: |value| = 0.d1d2d3... * 10^(exponent + 1), i.e. d1.d2d3... * 10^exponent.
struct decimal_digits {
  std::string digits;     ///< no leading zeros (exactly "0" for zero), no trailing zeros
  int exponent = 0;       ///< power of ten of the first digit
  bool negative = false;  ///< sign bit (also of -0.0)
};

/// The shortest digits that tell `value` apart from every other value of `type` (float16, float32 or
/// float64; `value` is exact in that type and finite), rounded to nearest when several are shortest.
decimal_digits shortest_digits(double value, dtype type);

/// numpy's trim modes: 'k' keep, '.' drop trailing zeros but keep the point, '0' keep one zero after
/// the point, '-' drop trailing zeros and the point.
enum class trim_mode { keep, zeros, leave_one_zero, dot_and_zeros };

/// How to render one float, numpy's Dragon4 arguments (unique mode only).
struct float_style {
  int precision = -1;   ///< at most this many fraction digits (rounded, half to even); -1: no cap
  int min_digits = -1;  ///< at least this many fraction digits (zero padded); -1: none
  trim_mode trim = trim_mode::keep;
  int pad_left = -1;    ///< the part before the point right-aligned to this width
  int pad_right = -1;   ///< positional: the fraction left-aligned to this width
  int exp_digits = -1;  ///< scientific: at least this many exponent digits (2 when -1)
};

/// numpy's `format_float_positional(value, unique=True, fractional=True, ...)`; value finite.
std::string format_positional(double value, dtype type, const float_style& style);

/// numpy's `format_float_scientific(value, unique=True, ...)`; value finite.
std::string format_scientific(double value, dtype type, const float_style& style);

} // namespace am::detail
