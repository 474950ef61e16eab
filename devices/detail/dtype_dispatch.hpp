/// Maps a runtime dtype to its C++ element type, for kernels written once as templates.
#pragma once

#include "actors/dtype.hpp"
#include "actors/errors.hpp"
#include "actors/float16.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
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

/// Converts between element types with numpy's semantics on x86: float to integer truncates
/// toward zero, NaN and out-of-range values give the integer's minimum (as the hardware does),
/// anything nonzero is true.
template <class To, class From>
To convert_element(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(x) != 0;
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    double v = static_cast<double>(static_cast<compute_t<From>>(x));
    using wide = std::conditional_t<std::is_same_v<To, std::uint8_t>, std::int64_t, To>;
    if (!(v >= static_cast<double>(std::numeric_limits<wide>::min())
          && v < -static_cast<double>(std::numeric_limits<wide>::min())))
      return static_cast<To>(std::numeric_limits<wide>::min());
    return static_cast<To>(static_cast<wide>(v));
  } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
    return To(static_cast<float>(static_cast<compute_t<From>>(x)));
  } else {
    return static_cast<To>(static_cast<compute_t<From>>(x));
  }
}

} // namespace am::detail
