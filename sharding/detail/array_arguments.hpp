/// What jit, vmap, grad and pmap take as arguments besides am::array, as JAX takes numpy arrays
/// and Python scalars: an am::host_array, or a scalar (made an int32, float32 or bool 0-d array, as
/// JAX does with 64-bit types off). The transformation's function sees an am::array either way.
#ifndef ACTORMESH_SHARDING_DETAIL_ARRAY_ARGUMENTS_HPP
#define ACTORMESH_SHARDING_DETAIL_ARRAY_ARGUMENTS_HPP

#include "actormesh/sharding/array.hpp"
#include "actormesh/sharding/host_array.hpp"

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace am::detail {

/// A scalar argument as JAX takes a Python one with 64-bit types off: int32 for integers, float32
/// for floating point, bool for bool.
template <class T>
  requires std::is_arithmetic_v<T>
host_array scalar_argument(T value) {
  if constexpr (std::is_same_v<T, bool>)
    return host_array::scalar(value);
  else if constexpr (std::is_integral_v<T>)
    return host_array::scalar(static_cast<std::int32_t>(value));
  else
    return host_array::scalar(static_cast<float>(value));
}

/// A type the transformations take as an argument: an array, a host array or a scalar.
template <class T>
concept array_argument = std::same_as<T, array> || std::same_as<T, host_array> || std::is_arithmetic_v<T>;

/// What the transformed function gets for an argument of any array_argument type: an array.
template <class T>
using as_array = const array&;

/// An argument of jit, vmap or grad as an array: host data is put on the default device (JAX's
/// uncommitted placement of a numpy argument).
inline array device_argument(const array& x) { return x; }
inline array device_argument(const host_array& x) { return device_put(x); }
template <class T>
  requires std::is_arithmetic_v<T>
array device_argument(T value) {
  return device_put(scalar_argument(value));
}

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_ARRAY_ARGUMENTS_HPP
