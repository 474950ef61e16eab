/// CAF's connection object (a scribe) with the guard's checks: every frame piece goes through a
/// frame_check before CAF's BASP broker sees it, and a payload larger than one chunk is read in
/// chunks into a buffer that grows with what has arrived, so a header that claims gigabytes costs
/// nothing until the bytes come (CAF itself would allocate and zero the whole claim first). Plain
/// TCP or TLS (CAF's OpenSSL session). Internal.
#pragma once

#include "cluster/guard/frame_check.hpp"

#include <caf/fwd.hpp>
#include <caf/io/fwd.hpp>

#include <memory>

namespace am::detail::guard {

/// How a scribe's socket came to be: accepted by the coordinator's guard, or connected by a member.
enum class socket_side { accepted, connected };

/// A scribe over `fd` (a TCP socket that has passed the guard's handshake; the scribe owns it from
/// here, also on failure) for `system`'s middleman. With `tls`, a TLS session is started on it
/// (CAF's OpenSSL module, with the certificates of the runtime's options). `slot` is released when
/// the scribe is destroyed (the listener's connection count). Returns null if the TLS session
/// cannot be made.
caf::io::scribe_ptr make_guarded_scribe(caf::actor_system& system, int fd, socket_side side, bool tls,
                                        std::unique_ptr<frame_check> check, std::shared_ptr<void> slot);

} // namespace am::detail::guard
