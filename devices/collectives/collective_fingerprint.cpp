#include "devices/collectives/collective_fingerprint.hpp"

#include "cluster/rendezvous_text.hpp"

#include <cstring>
#include <utility>

namespace am::detail {

namespace {

/// Marks a record (and its layout): "amfp" and a version byte.
constexpr std::byte record_magic[5] = {std::byte{'a'}, std::byte{'m'}, std::byte{'f'}, std::byte{'p'}, std::byte{1}};
constexpr std::size_t step_at = 5;       // 8 bytes, little-endian
constexpr std::size_t length_at = 13;    // 2 bytes, little-endian
constexpr std::size_t text_at = 15;
constexpr std::size_t text_room = fingerprint_bytes - text_at;

/// FNV-1a: a hash every process computes alike.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int k = 15; k >= 0; --k, v >>= 4)
    out[static_cast<std::size_t>(k)] = digits[v & 0xf];
  return out;
}

} // namespace

fingerprint_record encode_fingerprint(std::uint64_t step, const std::string& signature) {
  std::string text = signature;
  if (text.size() > text_room) {
    const std::string tail = "... #" + hex(fnv1a(signature));
    text = signature.substr(0, text_room - tail.size()) + tail;
  }
  fingerprint_record record{};
  std::memcpy(record.data(), record_magic, sizeof record_magic);
  for (int k = 0; k < 8; ++k)
    record[step_at + static_cast<std::size_t>(k)] = static_cast<std::byte>((step >> (8 * k)) & 0xff);
  record[length_at] = static_cast<std::byte>(text.size() & 0xff);
  record[length_at + 1] = static_cast<std::byte>(text.size() >> 8);
  std::memcpy(record.data() + text_at, text.data(), text.size());
  return record;
}

std::optional<decoded_fingerprint> decode_fingerprint(const std::byte* record) {
  if (std::memcmp(record, record_magic, sizeof record_magic) != 0)
    return std::nullopt;
  decoded_fingerprint out;
  for (int k = 0; k < 8; ++k)
    out.step |= static_cast<std::uint64_t>(record[step_at + static_cast<std::size_t>(k)]) << (8 * k);
  const std::size_t length = static_cast<std::size_t>(record[length_at])
                             | static_cast<std::size_t>(record[length_at + 1]) << 8;
  if (length > text_room)
    return std::nullopt;
  out.signature.assign(reinterpret_cast<const char*>(record + text_at), length);
  return out;
}

bool fingerprints_agree(const std::byte* records, std::size_t count) {
  for (std::size_t k = 1; k < count; ++k)
    if (std::memcmp(records, records + k * fingerprint_bytes, fingerprint_bytes) != 0)
      return false;
  return true;
}

std::string fingerprint_disagreement(const std::string& what, const std::vector<int>& processes,
                                     const std::byte* records, std::size_t mine, const std::string& suffix) {
  if (fingerprints_agree(records, processes.size()))
    return {};
  const std::byte* own = records + mine * fingerprint_bytes;
  const std::uint64_t step = decode_fingerprint(own)->step;
  std::vector<std::pair<int, std::string>> issued;
  for (std::size_t k = 0; k < processes.size(); ++k) {
    auto decoded = decode_fingerprint(records + k * fingerprint_bytes);
    if (!decoded)
      issued.emplace_back(processes[k], "a record that is not a collective's fingerprint");
    else if (decoded->step != step)
      issued.emplace_back(processes[k], decoded->signature + suffix + " as step " + std::to_string(decoded->step));
    else
      issued.emplace_back(processes[k], decoded->signature + suffix);
  }
  return desync_text(what, issued);
}

} // namespace am::detail
