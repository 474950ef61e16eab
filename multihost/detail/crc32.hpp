/// CRC-32 as zlib computes it (zlib.crc32 in Python), for sync_global_devices. Internal.
#pragma once

#include <cstdint>
#include <string_view>

namespace am::detail {

/// zlib's crc32 of the bytes of `text` (polynomial 0xEDB88320, reflected, initial and final
/// value 0xFFFFFFFF): crc32("hello") == 907060870.
std::uint32_t crc32(std::string_view text) noexcept;

} // namespace am::detail
