#include "cluster/free_port.hpp"

#include "actormesh/actors/errors.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

namespace am::detail {

namespace {

/// The lowest port of the kernel's ephemeral range (32768 when it cannot be read).
int ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 1024 && low <= 65535)
    return low;
  return 32768;
}

} // namespace

int bind_loopback_once(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw runtime_error(std::string("cannot create a socket to find a free port: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  int bound = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    bound = ntohs(address.sin_port);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return bound;
}

int free_loopback_port() {
  constexpr int lowest = 10000;
  const int high = ephemeral_low() - 1;
  if (high > lowest) {
    std::random_device seed;
    std::mt19937 draw(seed());
    std::uniform_int_distribution<int> pick(lowest, high);
    for (int attempt = 0; attempt < 200; ++attempt)
      if (int port = bind_loopback_once(pick(draw)); port > 0)
        return port;
  }
  if (int port = bind_loopback_once(0); port > 0)
    return port;
  throw runtime_error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
}

} // namespace am::detail
