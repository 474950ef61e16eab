/// Element types of arrays and buffers, as plain data that every floor can use.
#ifndef ACTORMESH_ACTORS_DTYPE_HPP
#define ACTORMESH_ACTORS_DTYPE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace am {

/// The element types actormesh arrays hold (the numpy/JAX names are given by `name`).
enum class dtype : std::uint8_t {
  bool_,
  uint8,
  int32,
  int64,
  float16,
  bfloat16,
  float32,
  float64,
};

/// Number of dtypes, for tables indexed by dtype.
inline constexpr std::size_t dtype_count = 8;

/// Size of one element in bytes.
constexpr std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::bool_:
    case dtype::uint8: return 1;
    case dtype::float16:
    case dtype::bfloat16: return 2;
    case dtype::int32:
    case dtype::float32: return 4;
    case dtype::int64:
    case dtype::float64: return 8;
  }
  return 0;
}

/// The numpy name of a dtype (`float32`, `bool`, `bfloat16`, ...).
constexpr std::string_view name(dtype t) noexcept {
  switch (t) {
    case dtype::bool_: return "bool";
    case dtype::uint8: return "uint8";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
  }
  return "?";
}

/// True for float16, bfloat16, float32 and float64.
constexpr bool is_floating(dtype t) noexcept {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}

/// True for uint8, int32 and int64.
constexpr bool is_integer(dtype t) noexcept {
  return t == dtype::uint8 || t == dtype::int32 || t == dtype::int64;
}

} // namespace am

#endif // ACTORMESH_ACTORS_DTYPE_HPP
