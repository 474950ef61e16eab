/// The compile-time dtype codes of the CUDA kernels (amd::dt<D> in device_math.cuh): plain C++17,
/// shared by the precompiled kernels and the host-side tests of their rules.
#pragma once

#include "actormesh/actors/dtype.hpp"

#include <type_traits>

namespace am::detail::cuda {

/// Calls `f(std::integral_constant<int, D>{})` with the dtype code of `t` (the enum's order).
template <class F>
void with_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::bool_: f(std::integral_constant<int, 0>{}); break;
    case dtype::uint8: f(std::integral_constant<int, 1>{}); break;
    case dtype::int32: f(std::integral_constant<int, 2>{}); break;
    case dtype::int64: f(std::integral_constant<int, 3>{}); break;
    case dtype::float16: f(std::integral_constant<int, 4>{}); break;
    case dtype::bfloat16: f(std::integral_constant<int, 5>{}); break;
    case dtype::float32: f(std::integral_constant<int, 6>{}); break;
    case dtype::float64: f(std::integral_constant<int, 7>{}); break;
  }
}

} // namespace am::detail::cuda
