/// A listening TCP socket, made the one way both of the runtime's servers need it: the
/// coordinator's guarded listener (cluster/guard/guarded_listener.cpp) and the metrics endpoint
/// (devices/metrics_endpoint.cpp). Internal.
#pragma once

#include <cstdint>
#include <string>

namespace am::detail {

/// What listen_socket made: the socket and the port it is bound to, or why there is none.
struct listening_socket {
  int fd = -1;            ///< -1 when it failed
  std::uint16_t port = 0; ///< the port bound (the one picked for port 0)
  std::string why;        ///< why it failed ("Address already in use", a resolver error)
};

/// A TCP socket bound to `host`:`port` (every interface when `host` is empty; port 0: a free one)
/// and listening with `backlog`: the first address of the host that binds, close-on-exec,
/// SO_REUSEADDR (a port in TIME_WAIT, not one in use), non-blocking when `nonblocking`.
listening_socket listen_socket(const std::string& host, std::uint16_t port, int backlog, bool nonblocking);

} // namespace am::detail
