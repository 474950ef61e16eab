#include "actormesh/actors/wire_codec.hpp"

#include "actormesh/actors/errors.hpp"

namespace am::detail {

void wire_writer::u32(std::uint32_t v) {
  for (int k = 0; k < 4; ++k)
    out_.push_back(static_cast<char>((v >> (8 * k)) & 0xffu));
}

void wire_writer::u64(std::uint64_t v) {
  for (int k = 0; k < 8; ++k)
    out_.push_back(static_cast<char>((v >> (8 * k)) & 0xffu));
}

void wire_writer::str(std::string_view s) {
  u64(s.size());
  out_.append(s);
}

void wire_writer::i32_list(const std::vector<int>& values) {
  u64(values.size());
  for (int v : values)
    i32(v);
}

void wire_reader::need(std::size_t n, const char* what) const {
  if (in_.size() - at_ < n)
    throw value_error(std::string("malformed cluster message: ") + what + " runs past the end ("
                      + std::to_string(in_.size()) + " bytes)");
}

std::uint8_t wire_reader::u8() {
  need(1, "a byte");
  return static_cast<std::uint8_t>(in_[at_++]);
}

std::uint32_t wire_reader::u32() {
  need(4, "a 32-bit integer");
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in_[at_++])) << (8 * k);
  return v;
}

std::uint64_t wire_reader::u64() {
  need(8, "a 64-bit integer");
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[at_++])) << (8 * k);
  return v;
}

std::int32_t wire_reader::i32_in(std::int32_t lo, std::int32_t hi, const char* what) {
  auto v = i32();
  if (v < lo || v > hi)
    throw value_error(std::string("malformed cluster message: ") + what + " " + std::to_string(v)
                      + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

std::string wire_reader::str(std::size_t max_bytes) {
  auto n = u64();
  if (n > max_bytes)
    throw value_error("malformed cluster message: a string of " + std::to_string(n)
                      + " bytes exceeds the limit of " + std::to_string(max_bytes));
  need(static_cast<std::size_t>(n), "a string");
  std::string s(in_.substr(at_, static_cast<std::size_t>(n)));
  at_ += static_cast<std::size_t>(n);
  return s;
}

std::vector<int> wire_reader::i32_list(std::size_t max_count) {
  auto n = u64();
  if (n > max_count)
    throw value_error("malformed cluster message: a list of " + std::to_string(n)
                      + " entries exceeds the limit of " + std::to_string(max_count));
  need(static_cast<std::size_t>(n) * 4, "a list");
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t k = 0; k < n; ++k)
    out.push_back(i32());
  return out;
}

void wire_reader::finish() const {
  if (at_ != in_.size())
    throw value_error("malformed cluster message: " + std::to_string(in_.size() - at_)
                      + " unexpected bytes at the end");
}

} // namespace am::detail
