#include "cluster/guard/cluster_secret.hpp"

#include "actormesh/actors/errors.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace am::detail {

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw runtime_error("the cluster guard cannot draw random bytes (OpenSSL's RAND_bytes failed)");
  return out;
}

std::string generate_cluster_token() {
  static constexpr char digits[] = "0123456789abcdef";
  auto raw = random_bytes(32);
  std::string hex;
  hex.reserve(64);
  for (unsigned char c : raw) {
    hex.push_back(digits[c >> 4]);
    hex.push_back(digits[c & 15]);
  }
  return hex;
}

mac_bytes hmac_sha256(std::string_view key, std::string_view data) {
  mac_bytes out{};
  unsigned int len = 0;
  // An empty key is valid HMAC input; OpenSSL wants a non-null pointer for it.
  static const unsigned char empty = 0;
  auto* k = key.empty() ? &empty : reinterpret_cast<const unsigned char*>(key.data());
  if (HMAC(EVP_sha256(), k, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), out.data(), &len) == nullptr || len != out.size())
    throw runtime_error("the cluster guard cannot compute HMAC-SHA256 (OpenSSL failed)");
  return out;
}

bool equal_macs(const mac_bytes& a, const mac_bytes& b) noexcept {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string read_cluster_token_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw value_error(std::string("the cluster token file '") + path + "' (" + what + ") cannot be read: "
                      + std::strerror(errno));
  std::string text(4097, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > 4096)
    throw value_error(std::string("the cluster token file '") + path + "' (" + what
                      + ") is over 4096 bytes: it should hold one line, the cluster's secret");
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  if (!text.empty() && text.back() == '\r')
    text.pop_back();
  if (text.empty())
    throw value_error(std::string("the cluster token file '") + path + "' (" + what + ") is empty");
  return text;
}

std::string cluster_token_from_environment() {
  auto* token = std::getenv("AM_CLUSTER_TOKEN");
  auto* file = std::getenv("AM_CLUSTER_TOKEN_FILE");
  bool has_token = token != nullptr && *token != '\0';
  bool has_file = file != nullptr && *file != '\0';
  if (has_token && has_file)
    throw value_error("the cluster's secret is given twice: AM_CLUSTER_TOKEN and AM_CLUSTER_TOKEN_FILE; give one");
  if (has_file)
    return read_cluster_token_file(file, "AM_CLUSTER_TOKEN_FILE");
  return has_token ? std::string(token) : std::string();
}

} // namespace am::detail
