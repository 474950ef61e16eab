/// The byte codec of the cluster's control messages: payloads travel as one string of bytes in a
/// CAF message and are decoded with every length and count checked, so a malformed or oversized
/// message from the network is refused with am::value_error instead of crashing or allocating
/// without bound.
#ifndef ACTORMESH_ACTORS_WIRE_CODEC_HPP
#define ACTORMESH_ACTORS_WIRE_CODEC_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace am::detail {

/// The most bytes a decoded string may have (keys, names, signatures, values of the store).
inline constexpr std::size_t max_wire_string = 64u << 20;

/// The most elements a decoded list may have (devices, processes).
inline constexpr std::size_t max_wire_list = 1u << 20;

/// Appends little-endian integers and length-prefixed strings to a byte string.
class wire_writer {
public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void str(std::string_view s);
  void i32_list(const std::vector<int>& values);

  /// The bytes written so far.
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

/// Reads what wire_writer wrote; every read checks the remaining length and throws am::value_error
/// ("malformed cluster message: ...") when the input is short or a count is out of range.
class wire_reader {
public:
  explicit wire_reader(std::string_view bytes) : in_(bytes) {}

  std::uint8_t u8();
  std::uint32_t u32();
  std::uint64_t u64();
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  /// An i32 in [lo, hi].
  std::int32_t i32_in(std::int32_t lo, std::int32_t hi, const char* what);
  std::string str(std::size_t max_bytes = max_wire_string);
  std::vector<int> i32_list(std::size_t max_count = max_wire_list);

  /// Throws unless every byte was read (trailing garbage is refused too).
  void finish() const;

private:
  void need(std::size_t n, const char* what) const;
  std::string_view in_;
  std::size_t at_ = 0;
};

} // namespace am::detail

#endif // ACTORMESH_ACTORS_WIRE_CODEC_HPP
