/// Shapes and the products of their sizes. Every product of extents in actormesh (element counts,
/// byte sizes, mesh device counts, reshape targets) goes through `checked_mul`, so an overflowing or
/// negative size is a clear am::value_error instead of a wrapped number.
#ifndef ACTORMESH_ACTORS_SHAPE_HPP
#define ACTORMESH_ACTORS_SHAPE_HPP

#include "actormesh/actors/dtype.hpp"
#include "actormesh/actors/errors.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace am {

/// A shape: one extent per dimension, row-major.
using shape_t = std::vector<std::int64_t>;

/// `a * b` when it fits in int64, else nothing: the one overflow check behind every size product.
constexpr std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return std::nullopt;
  return out;
}

/// The number of elements of `shape` (1 for a scalar), or nothing when an extent is negative or the
/// product does not fit in int64. The non-throwing path for hot code and for callers that word the
/// error themselves.
std::optional<std::int64_t> try_element_count(std::span<const std::int64_t> shape) noexcept;

/// Number of elements of a shape (1 for a scalar). Throws am::value_error for a negative extent
/// ("negative dimensions are not allowed", numpy's wording) and for a product past int64 ("array is
/// too big; ...", numpy's wording followed by the shape).
std::int64_t element_count(const shape_t& shape);

/// Number of bytes of an array of `shape` and `type`; throws am::value_error like element_count, and
/// when the byte count does not fit in int64.
std::int64_t byte_size(const shape_t& shape, am::dtype type);

/// numpy's shape text as Python prints a tuple: `(2, 3)`, `(4,)`, `()`.
std::string shape_to_string(const shape_t& shape);

/// Parses an array shape written as non-negative decimal extents separated by commas: `8192,8192`,
/// `8`; the empty text is the scalar shape `()`. Throws am::value_error for an empty entry (`8,,2`,
/// `8,2,`), a character other than a digit (no sign, no blank), an extent past int64, and a shape
/// whose element count does not fit in int64.
shape_t parse_shape(std::string_view text);

namespace detail {

/// The parse error of the shape and mesh parsers: "Invalid <what> '<text>': <reason>; <usage>".
value_error invalid_text(std::string_view what, std::string_view text, const std::string& reason,
                         std::string_view usage);

/// The decimal extents in `text`, separated by `separator` (the shared core of the shape and mesh
/// parsers). Throws detail::invalid_text's am::value_error for an empty entry,
/// a character other than a digit, or an extent past int64 (refused, never clamped).
shape_t parse_extents(std::string_view text, char separator, std::string_view what, std::string_view usage);

} // namespace detail

} // namespace am

#endif // ACTORMESH_ACTORS_SHAPE_HPP
