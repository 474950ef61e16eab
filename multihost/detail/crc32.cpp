#include "multihost/detail/crc32.hpp"

#include <algorithm>
#include <zlib.h>

namespace am::detail {

std::uint32_t crc32(std::string_view text) noexcept {
  // zlib's own: the checksum JAX takes through Python's zlib.crc32. Its length is a uInt, so a
  // longer text is fed in pieces.
  uLong c = ::crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(text.data());
  for (std::size_t left = text.size(); left > 0;) {
    const auto piece = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    c = ::crc32(c, bytes, piece);
    bytes += piece;
    left -= piece;
  }
  return static_cast<std::uint32_t>(c);
}

} // namespace am::detail
