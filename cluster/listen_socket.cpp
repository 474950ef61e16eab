#include "cluster/listen_socket.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace am::detail {

listening_socket listen_socket(const std::string& host, std::uint16_t port, int backlog, bool nonblocking) {
  listening_socket out;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    out.why = ::gai_strerror(rc);
    return out;
  }
  out.why = "no address";
  int fd = -1;
  for (auto* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), a->ai_protocol);
    if (fd < 0) {
      out.why = std::strerror(errno);
      if (errno == EMFILE || errno == ENFILE)
        out.why += " (this process is at its file descriptor limit)";
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, backlog) != 0) {
      out.why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    return out;
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
  out.port = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(local).sin6_port
                                               : reinterpret_cast<sockaddr_in&>(local).sin_port);
  out.fd = fd;
  out.why.clear();
  return out;
}

} // namespace am::detail
