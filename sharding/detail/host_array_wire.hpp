/// How an am::host_array travels between processes (actors/value_wire.hpp): dtype, shape, bytes.
/// A shape that does not match the bytes that came with it is refused before anything is
/// allocated.
#ifndef ACTORMESH_SHARDING_DETAIL_HOST_ARRAY_WIRE_HPP
#define ACTORMESH_SHARDING_DETAIL_HOST_ARRAY_WIRE_HPP

#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/value_wire.hpp"
#include "actormesh/sharding/host_array.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace am::detail {

template <>
struct wire_value<host_array> {
  /// The most dimensions a travelling array may have.
  static constexpr std::uint32_t max_rank = 64;

  static void write(wire_writer& w, const host_array& a) {
    w.u8(static_cast<std::uint8_t>(a.dtype()));
    w.u32(static_cast<std::uint32_t>(a.shape().size()));
    for (auto d : a.shape())
      w.u64(static_cast<std::uint64_t>(d));
    auto bytes = a.bytes();
    w.str(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  static host_array read(wire_reader& r) {
    auto code = r.u8();
    if (code >= dtype_count)
      throw value_error("malformed cluster message: host_array dtype " + std::to_string(code));
    auto type = static_cast<am::dtype>(code);
    auto rank = r.u32();
    if (rank > max_rank)
      throw value_error("malformed cluster message: host_array of rank " + std::to_string(rank));
    std::vector<std::int64_t> shape;
    for (std::uint32_t k = 0; k < rank; ++k)
      shape.push_back(static_cast<std::int64_t>(r.u64()));
    auto bytes = r.str();
    std::uint64_t elements = 1;
    for (auto d : shape) {
      if (d < 0 || (d > 0 && elements > bytes.size() / static_cast<std::uint64_t>(d) + 1))
        throw value_error("malformed cluster message: host_array shape does not match its bytes");
      elements *= static_cast<std::uint64_t>(d);
    }
    if (elements * size_of(type) != bytes.size())
      throw value_error("malformed cluster message: host_array shape does not match its bytes");
    return host_array::from_bytes(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), type, shape);
  }
};

} // namespace am::detail

#endif // ACTORMESH_SHARDING_DETAIL_HOST_ARRAY_WIRE_HPP
