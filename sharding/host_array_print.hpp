/// Printing host arrays exactly as numpy prints them (`str(x)` / `print(x)` and `repr(x)`), so output
/// can be compared with numpy's and JAX's character for character.
#ifndef ACTORMESH_SHARDING_HOST_ARRAY_PRINT_HPP
#define ACTORMESH_SHARDING_HOST_ARRAY_PRINT_HPP

#include <cstdint>
#include <iosfwd>
#include <string>

#include "actormesh/sharding/host_array.hpp"

namespace am {

/// The numpy print options we honour (numpy's defaults); floatmode is always 'maxprec', sign '-' and
/// suppress off, as in numpy's default.
struct print_options {
  int precision = 8;              ///< at most this many fraction digits per float
  std::int64_t threshold = 1000;  ///< arrays with more elements are summarized with "..."
  std::int64_t edgeitems = 3;     ///< items kept at each end of a summarized dimension
  int linewidth = 75;             ///< lines are wrapped to this many characters
};

/// numpy's `str(x)`: `[[0. 1.]\n [2. 3.]]`, `[1 2 3]`, `[ True False]`; a 0-d array prints its
/// element as numpy prints the scalar (`1.0`, `3`, `True`); an empty array prints `[]`.
///
/// Floats use numpy's rules: the shortest text that identifies each value, at most `precision` fraction
/// digits, one width per array, a trailing `.` on integral values, and scientific notation when the
/// largest magnitude reaches 1e8 (float64; 1e6 float32, 1e3 float16), the smallest is below 1e-4 or
/// their ratio exceeds 1000. bfloat16 prints each element as ml_dtypes does (6 significant digits, no
/// alignment: `[1 2.5 0.100098]`).
std::string to_string(const host_array& a, const print_options& options = {});

/// numpy's `repr(x)`: `array([1., 2.], dtype=float32)`; the dtype is omitted for float64, int64 and
/// bool, and a summarized or empty non-1-d array adds `shape=(...)` as numpy 2 does.
std::string repr(const host_array& a, const print_options& options = {});

/// Writes `to_string(a)` (what `print(x)` shows in numpy).
std::ostream& operator<<(std::ostream& os, const host_array& a);

} // namespace am

#endif // ACTORMESH_SHARDING_HOST_ARRAY_PRINT_HPP
