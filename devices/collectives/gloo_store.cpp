#include "devices/collectives/gloo_store.hpp"

#include "actors/cluster_services.hpp"
#include "actormesh/actors/errors.hpp"

#include <algorithm>

namespace am::detail {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

std::string to_hex(const std::vector<char>& data) {
  std::string out;
  out.reserve(data.size() * 2);
  for (char c : data) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(hex_digits[byte >> 4]);
    out.push_back(hex_digits[byte & 0xf]);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::vector<char> from_hex(const std::string& key, const std::string& text) {
  if (text.size() % 2 != 0)
    throw runtime_error("Gloo rendezvous key '" + key + "' holds " + std::to_string(text.size())
                        + " characters, not hex-encoded bytes");
  std::vector<char> out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(text[2 * i]);
    const int lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0)
      throw runtime_error("Gloo rendezvous key '" + key + "' holds a value that is not hex-encoded bytes");
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return out;
}

} // namespace

gloo_store::gloo_store(cluster_services& cluster, std::string prefix, clock::time_point deadline)
    : cluster_(cluster), prefix_(std::move(prefix)), deadline_(deadline) {}

std::string gloo_store::cluster_key(const std::string& key) const {
  return prefix_ + key;
}

std::chrono::milliseconds gloo_store::remaining() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

void gloo_store::set(const std::string& key, const std::vector<char>& data) {
  cluster_.kv_set(cluster_key(key), to_hex(data));
}

std::vector<char> gloo_store::get(const std::string& key) {
  const auto full = cluster_key(key);
  return from_hex(full, cluster_.kv_get(full, remaining()));
}

void gloo_store::wait(const std::vector<std::string>& keys) {
  wait(keys, remaining());
}

void gloo_store::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& key : keys)
    full.push_back(cluster_key(key));
  cluster_.kv_wait(full, std::min(timeout, remaining()));
}

} // namespace am::detail
