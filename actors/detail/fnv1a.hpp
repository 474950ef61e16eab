/// FNV-1a, 64 bits: a short digest that is the same in every process for the same input (names
/// of communicators, the pairs of a permutation in a collective's signature). Not for security.
/// Internal.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace am::detail {

/// An FNV-1a digest being built byte by byte.
class fnv1a64 {
public:
  /// Mixes in one byte.
  void add_byte(std::uint8_t b) noexcept {
    value_ ^= b;
    value_ *= 1099511628211ull;
  }

  /// Mixes in the four bytes of `v`, lowest first.
  void add_u32(std::uint32_t v) noexcept {
    for (int k = 0; k < 4; ++k)
      add_byte(static_cast<std::uint8_t>((v >> (8 * k)) & 0xffu));
  }

  /// Mixes in every byte of `text`.
  void add_text(std::string_view text) noexcept {
    for (unsigned char c : text)
      add_byte(c);
  }

  /// The digest so far.
  std::uint64_t value() const noexcept { return value_; }

  /// The digest as 16 hex digits.
  std::string hex() const {
    char out[20];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(value_));
    return out;
  }

private:
  std::uint64_t value_ = 14695981039346656037ull;
};

} // namespace am::detail
