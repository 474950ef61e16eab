/// The client's side of the guard's handshake over a blocking-style socket with a deadline: used
/// by a process joining the coordinator (guarded_connect) and by the collectives' data plane when
/// it connects to a peer's pair listener. Internal.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <sys/socket.h>

namespace am::detail::guard {

/// How a step or the whole handshake ended; `why` is empty when it completed.
struct handshake_outcome {
  std::string why;
  bool final = false;       ///< retrying cannot help (a wrong or missing secret, another protocol)
  bool at_deadline = false; ///< the deadline ended it: it says nothing about the peer
  bool unanswered = false;  ///< it stopped before the peer's answer came (the peer may be at a limit)
};

/// Milliseconds until `deadline`, at least 0 (a poll's timeout).
int millis_left(std::chrono::steady_clock::time_point deadline);

/// A connected non-blocking socket to `address` (TCP_NODELAY set), or -1 with `why` set;
/// `at_deadline` tells that the deadline ended the wait.
int connect_socket(const sockaddr* address, socklen_t length, std::chrono::steady_clock::time_point deadline,
                   std::string& why, bool& at_deadline);

/// Runs the client's side on connected socket `fd`: hello, the server's answer and proof, this
/// side's proof, the verdict. `secret` empty: this side holds none. `peer` names the other side
/// in the reasons ("the coordinator", "process 3"). Reads no byte past the verdict.
handshake_outcome run_client_handshake(int fd, const std::string& secret, std::string_view peer,
                                       std::chrono::steady_clock::time_point deadline);

} // namespace am::detail::guard
