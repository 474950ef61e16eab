/// Maps a runtime dtype to its C++ element type, for kernels written once as templates.
#pragma once

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/dtype_promotion.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/float16.hpp"

#include <cstdint>
#include <type_traits>

namespace am::detail {

/// Carries a type through a generic lambda: `[](auto tag) { using T = typename decltype(tag)::type; }`.
template <class T>
struct type_tag {
  using type = T;
};

/// Calls `f(type_tag<T>{})` with the C++ element type of `t`.
template <class F>
decltype(auto) visit_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::bool_: return f(type_tag<bool>{});
    case dtype::uint8: return f(type_tag<std::uint8_t>{});
    case dtype::int32: return f(type_tag<std::int32_t>{});
    case dtype::int64: return f(type_tag<std::int64_t>{});
    case dtype::float16: return f(type_tag<float16>{});
    case dtype::bfloat16: return f(type_tag<bfloat16>{});
    case dtype::float32: return f(type_tag<float>{});
    case dtype::float64: return f(type_tag<double>{});
  }
  throw value_error("unknown dtype");
}

/// The type arithmetic on T is done in: float for the 16-bit floats, int for bool, T otherwise.
template <class T>
using compute_t = std::conditional_t<
  std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>, float,
  std::conditional_t<std::is_same_v<T, bool>, int, T>>;

/// Converts between element types with numpy's semantics on x86-64 (am::convert_element in
/// actors/dtype_promotion.hpp, which the CPU kernels follow): float to int64 truncates toward zero,
/// NaN and out-of-range values give INT64_MIN; float to int32 and uint8 go through int32 (NaN and
/// out of range: INT32_MIN, then wrapped); integers wrap; anything nonzero (NaN too) is true;
/// double to float16 rounds once, anything to bfloat16 goes through float.
template <class To, class From>
To convert_element(From x) {
  return am::convert_element<To>(x);
}

} // namespace am::detail
