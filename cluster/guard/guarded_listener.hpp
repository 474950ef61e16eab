/// The coordinator's public port. A thread of ours accepts each connection, bounds how many are
/// held (in total and while still in the handshake, per address too), runs the guard handshake
/// (the cluster's secret) within a deadline, and only then hands the socket to CAF's BASP broker,
/// behind a guarded scribe that checks every frame. CAF's own listener is never opened. Internal.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace am::detail::guard {

/// What a guarded listener enforces.
struct listener_settings {
  std::string address;                   ///< the interface to bind (a host name or an address)
  std::uint16_t port = 0;                ///< 0: any free port
  std::string secret;                    ///< empty: no secret is checked
  bool tls = false;                      ///< after the handshake, TLS through CAF's OpenSSL module
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;
  std::size_t max_connections = 512;     ///< held at once, handshakes included
  std::size_t max_handshakes = 64;       ///< connections still in their handshake
  std::size_t max_handshakes_per_address = 32;
  std::chrono::milliseconds handshake_timeout{5000};
};

struct listener_state;

/// Listens until destroyed (which closes the port and every connection still in its handshake;
/// connections already handed to CAF end with the actor system).
class guarded_listener {
public:
  /// Binds and starts listening; `published` is the actor a connecting process finds there.
  /// Throws am::runtime_error naming the address and the reason when it cannot bind.
  guarded_listener(caf::actor_system& system, caf::actor published, listener_settings settings);
  ~guarded_listener();
  guarded_listener(const guarded_listener&) = delete;
  guarded_listener& operator=(const guarded_listener&) = delete;

  /// The port it listens on.
  std::uint16_t port() const noexcept;

private:
  std::shared_ptr<listener_state> state_;
  std::thread thread_;
};

/// True for a loopback address or name (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

} // namespace am::detail::guard
