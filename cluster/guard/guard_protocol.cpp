#include "cluster/guard/guard_protocol.hpp"

#include <algorithm>
#include <cstring>

namespace am::detail::guard {

namespace {

constexpr std::string_view server_label = "actormesh guard v1 server";
constexpr std::string_view client_label = "actormesh guard v1 client";

mac_bytes proof(std::string_view label, const std::string& secret, std::string_view cn, std::string_view sn) {
  if (secret.empty())
    return mac_bytes{};
  std::string data;
  data.reserve(label.size() + cn.size() + sn.size());
  data.append(label).append(cn).append(sn);
  return hmac_sha256(secret, data);
}

} // namespace

std::string encode(const hello& h) {
  std::string out(magic);
  out.push_back(static_cast<char>(h.has_secret ? 1 : 0));
  out.append(h.nonce);
  out.resize(hello_size, '\0');
  return out;
}

std::string encode(const answer& a) {
  std::string out(magic);
  out.push_back(static_cast<char>(a.verdict));
  out.push_back(static_cast<char>(a.has_secret ? 1 : 0));
  out.append(a.nonce);
  out.resize(8 + 2 + nonce_size, '\0');
  out.append(reinterpret_cast<const char*>(a.proof.data()), a.proof.size());
  return out;
}

std::optional<hello> decode_hello(std::string_view bytes) {
  if (bytes.size() != hello_size || bytes.substr(0, 8) != magic)
    return std::nullopt;
  auto flags = static_cast<std::uint8_t>(bytes[8]);
  if (flags > 1)
    return std::nullopt;
  return hello{flags == 1, std::string(bytes.substr(9, nonce_size))};
}

std::optional<answer> decode_answer(std::string_view bytes) {
  if (bytes.size() != answer_size || bytes.substr(0, 8) != magic)
    return std::nullopt;
  auto v = static_cast<std::uint8_t>(bytes[8]);
  auto flags = static_cast<std::uint8_t>(bytes[9]);
  if (v > static_cast<std::uint8_t>(verdict::secret_needed) || flags > 1)
    return std::nullopt;
  answer a;
  a.verdict = static_cast<verdict>(v);
  a.has_secret = flags == 1;
  a.nonce = std::string(bytes.substr(10, nonce_size));
  std::memcpy(a.proof.data(), bytes.data() + 10 + nonce_size, a.proof.size());
  return a;
}

mac_bytes server_proof(const std::string& secret, std::string_view cn, std::string_view sn) {
  return proof(server_label, secret, cn, sn);
}

mac_bytes client_proof(const std::string& secret, std::string_view cn, std::string_view sn) {
  return proof(client_label, secret, cn, sn);
}

server_handshake::server_handshake(std::string secret) : secret_(std::move(secret)) {}

std::size_t server_handshake::wanted() const noexcept {
  switch (state_) {
    case state::await_hello:
      return hello_size - buf_.size();
    case state::await_proof:
      return proof_size - buf_.size();
    default:
      return 0;
  }
}

std::size_t server_handshake::feed(std::string_view in, std::string& out) {
  std::size_t taken = 0;
  while (taken < in.size() && wanted() > 0) {
    auto n = std::min(wanted(), in.size() - taken);
    buf_.append(in.substr(taken, n));
    taken += n;
    // Junk (HTTP, a port scanner, CAF's own protocol) is refused at its first byte that is not
    // ours, not at the handshake's deadline.
    if (state_ == state::await_hello && buf_.compare(0, std::min(buf_.size(), magic.size()), magic, 0,
                                                     std::min(buf_.size(), magic.size())) != 0) {
      state_ = state::refused;
      reason_ = "it does not speak actormesh's guard protocol";
      break;
    }
    if (wanted() > 0)
      break;
    if (state_ == state::await_hello)
      on_hello(out);
    else
      on_proof(out);
    buf_.clear();
  }
  return taken;
}

void server_handshake::on_hello(std::string& out) {
  auto h = decode_hello(buf_);
  if (!h) {
    state_ = state::refused;
    reason_ = "it does not speak actormesh's guard protocol";
    return;
  }
  answer a;
  a.has_secret = !secret_.empty();
  a.nonce = random_bytes(nonce_size);
  if (!secret_.empty() && !h->has_secret) {
    a.verdict = verdict::secret_needed;
    out += encode(a);
    state_ = state::refused;
    reason_ = "it holds no cluster secret and this cluster has one";
    return;
  }
  client_nonce_ = h->nonce;
  server_nonce_ = a.nonce;
  a.proof = server_proof(secret_, client_nonce_, server_nonce_);
  out += encode(a);
  state_ = state::await_proof;
}

void server_handshake::on_proof(std::string& out) {
  mac_bytes got{};
  std::memcpy(got.data(), buf_.data(), got.size());
  if (!secret_.empty() && !equal_macs(got, client_proof(secret_, client_nonce_, server_nonce_))) {
    out.push_back('\1');
    state_ = state::refused;
    reason_ = "its proof of the cluster secret is wrong (another AM_CLUSTER_TOKEN)";
    return;
  }
  out.push_back('\0');
  state_ = state::admitted;
}

} // namespace am::detail::guard
