/// The guard's handshake, spoken on a fresh TCP connection to the coordinator before any byte of
/// CAF's own protocol (and before TLS, when TLS is on):
///
///   client -> server  hello   "AMGUARD1", flags (bit 0: the client holds a secret), 32-byte nonce
///   server -> client  answer  "AMGUARD1", verdict, flags (bit 0: the server holds a secret),
///                             32-byte nonce, 32-byte proof (HMAC of the secret over both nonces)
///   client -> server  proof   32 bytes (HMAC of the secret over both nonces, the client's label)
///   server -> client  final   one byte: 0 let in, 1 refused
///
/// Without a secret on either side the proofs are zeros and not checked: the exchange then only
/// shows that the peer speaks actormesh, within the handshake's deadline. This file holds the byte
/// formats and the server's state machine, free of sockets, so that they can be fuzzed. Internal.
#pragma once

#include "cluster/guard/cluster_secret.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace am::detail::guard {

inline constexpr std::string_view magic = "AMGUARD1";
inline constexpr std::size_t nonce_size = 32;
inline constexpr std::size_t hello_size = 8 + 1 + nonce_size;
inline constexpr std::size_t answer_size = 8 + 1 + 1 + nonce_size + 32;
inline constexpr std::size_t proof_size = 32;

/// What the server says to a hello.
enum class verdict : std::uint8_t {
  go_on = 0,          ///< proofs follow
  secret_needed = 1,  ///< the server holds a secret and the client said it holds none
};

struct hello {
  bool has_secret = false;
  std::string nonce; ///< nonce_size bytes
};

struct answer {
  guard::verdict verdict = verdict::go_on;
  bool has_secret = false;
  std::string nonce;
  mac_bytes proof{};
};

std::string encode(const hello& h);
std::string encode(const answer& a);
/// The hello in `bytes` (exactly hello_size), or nothing if it is not one.
std::optional<hello> decode_hello(std::string_view bytes);
/// The answer in `bytes` (exactly answer_size), or nothing if it is not one.
std::optional<answer> decode_answer(std::string_view bytes);

/// The server's proof and the client's, over both nonces (zeros without a secret).
mac_bytes server_proof(const std::string& secret, std::string_view client_nonce, std::string_view server_nonce);
mac_bytes client_proof(const std::string& secret, std::string_view client_nonce, std::string_view server_nonce);

/// One connection's handshake as the server sees it: feed it the bytes that arrive, send what it
/// returns. Ends `admitted` (hand the connection to CAF) or `refused` (close it; `reason` says
/// why, for the log). It never buffers more than one message's bytes.
class server_handshake {
public:
  enum class state { await_hello, await_proof, admitted, refused };

  /// `secret` empty: no secret is checked.
  explicit server_handshake(std::string secret);

  /// Takes up to the bytes the current step needs from `in`, returns how many it took; appends
  /// what to send to `out`.
  std::size_t feed(std::string_view in, std::string& out);

  /// How many more bytes the current step waits for (0 when done).
  std::size_t wanted() const noexcept;

  state current() const noexcept { return state_; }
  const std::string& reason() const noexcept { return reason_; }

private:
  void on_hello(std::string& out);
  void on_proof(std::string& out);

  std::string secret_;
  state state_ = state::await_hello;
  std::string buf_;
  std::string client_nonce_;
  std::string server_nonce_;
  std::string reason_;
};

} // namespace am::detail::guard
