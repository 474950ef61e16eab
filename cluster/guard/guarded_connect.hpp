/// A process's side of the guard: connect to the coordinator's guarded port, run the handshake
/// (prove the cluster's secret, check the coordinator's proof), then give the socket to CAF's
/// BASP broker and wait for the actor published there. Internal.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace am::detail::guard {

/// Where and how to connect.
struct connect_settings {
  std::string host;
  std::uint16_t port = 0;
  std::string secret;   ///< empty: this process holds no secret
  bool tls = false;
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;
};

/// The outcome of one attempt.
struct connect_result {
  caf::actor found;     ///< the published actor, or null
  std::string error;    ///< why not, when `found` is null
  bool final = false;   ///< true: retrying cannot help (a refused or wrong secret, another protocol)
  bool cut_short = false; ///< it ended at the deadline, before the coordinator said anything telling
};

/// One attempt, bounded by `deadline`.
connect_result guarded_connect(caf::actor_system& system, const connect_settings& s,
                               std::chrono::steady_clock::time_point deadline);

/// Attempts every 100 ms until one finds the actor, one is refused for good (`final`), or the
/// deadline passes; then `error` is the most telling reason seen (an attempt the deadline cut short
/// does not hide an earlier refusal).
connect_result guarded_connect_until(caf::actor_system& system, const connect_settings& s,
                                     std::chrono::steady_clock::time_point deadline);

} // namespace am::detail::guard
