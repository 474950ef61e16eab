#include "multihost/detail/crc32.hpp"

#include <array>

namespace am::detail {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

constexpr auto table = make_table();

} // namespace

std::uint32_t crc32(std::string_view text) noexcept {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : text)
    c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

} // namespace am::detail
