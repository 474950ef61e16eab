// A plain HTTP client on loopback for tests of the metrics endpoint: a socket with timeouts and a GET.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

namespace am::testing {

/// A connection to 127.0.0.1:`port` that reads with a 10 s timeout; closed when destroyed.
class loopback_socket {
public:
  explicit loopback_socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~loopback_socket() { ::close(fd_); }
  loopback_socket(const loopback_socket&) = delete;
  loopback_socket& operator=(const loopback_socket&) = delete;

  bool connected() const { return connected_; }
  /// Sends all of `bytes`; false when the peer closed or the send timed out.
  bool send_all(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// Everything the peer sends until it closes (at most 8 MiB, or what came before a timeout).
  std::string read_all() {
    std::string out;
    char buf[65536];
    while (out.size() < (8u << 20)) {
      const auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0)
        break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

private:
  int fd_;
  bool connected_ = false;
};

/// The reply to GET `path` on 127.0.0.1:`port` (status line, headers and body); "" when nothing
/// listens there or the request could not be sent.
inline std::string http_get(int port, const std::string& path = "/metrics") {
  loopback_socket s(port);
  if (!s.connected() || !s.send_all("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
    return "";
  return s.read_all();
}

} // namespace am::testing
