#include "cluster/guard/client_handshake.hpp"

#include "cluster/guard/guard_protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

namespace am::detail::guard {

namespace {

using clock = std::chrono::steady_clock;

/// Waits until `fd` can do `events` or the deadline passes.
bool wait_for(int fd, short events, clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, millis_left(deadline));
    if (rc > 0)
      return true;
    if (rc == 0 || errno != EINTR)
      return false;
  }
}

handshake_outcome io_failure(ssize_t n, std::string_view peer, const char* what) {
  if (n == 0)
    return {std::string(peer) + " closed the connection while " + what, false, false};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    return {std::string("no answer before the deadline while ") + what, false, true};
  return {std::string(std::strerror(errno)) + " while " + what, false, false};
}

/// Sends all of `bytes`.
handshake_outcome send_all(int fd, std::string_view bytes, std::string_view peer, clock::time_point deadline,
                           const char* what) {
  while (!bytes.empty()) {
    auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && wait_for(fd, POLLOUT, deadline))
      continue;
    return io_failure(n < 0 ? n : -1, peer, what);
  }
  return {};
}

/// Reads exactly `n` bytes (never more).
handshake_outcome receive_exactly(int fd, std::size_t n, std::string& out, std::string_view peer,
                                  clock::time_point deadline, const char* what) {
  out.clear();
  char buf[128];
  while (out.size() < n) {
    auto got = ::recv(fd, buf, std::min(sizeof buf, n - out.size()), 0);
    if (got > 0) {
      out.append(buf, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && wait_for(fd, POLLIN, deadline))
      continue;
    return io_failure(got, peer, what);
  }
  return {};
}

handshake_outcome refusal(std::string why) { return {std::move(why), true, false}; }

} // namespace

int millis_left(clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
  return static_cast<int>(std::max<std::int64_t>(left, 0));
}

int connect_socket(const sockaddr* address, socklen_t length, clock::time_point deadline, std::string& why,
                   bool& at_deadline) {
  int fd = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, address, length);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    err = ETIMEDOUT;
    at_deadline = !wait_for(fd, POLLOUT, deadline);
    if (!at_deadline) {
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
  }
  if (err != 0) {
    why = std::strerror(err);
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

handshake_outcome run_client_handshake(int fd, const std::string& secret, std::string_view peer,
                                       clock::time_point deadline) {
  const std::string who(peer);
  hello h{!secret.empty(), random_bytes(nonce_size)};
  std::string bytes;
  auto stopped = send_all(fd, encode(h), peer, deadline, "sending the guard's hello");
  if (stopped.why.empty())
    stopped = receive_exactly(fd, answer_size, bytes, peer, deadline, "waiting for the guard's answer");
  if (!stopped.why.empty()) {
    stopped.unanswered = true;
    return stopped;
  }
  auto a = decode_answer(bytes);
  if (!a)
    return refusal("the process at that address does not speak actormesh's guard protocol (another program, "
                   "or an actormesh of another version)");
  if (a->verdict == verdict::secret_needed)
    return refusal(who + " requires the cluster's secret and this process has none: give every process the same "
                         "AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE");
  if (!a->has_secret && !secret.empty())
    return refusal("this process holds a cluster secret but " + who
                   + " has none: give every process the same AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE");
  if (!secret.empty() && !equal_macs(a->proof, server_proof(secret, h.nonce, a->nonce)))
    return refusal(who + " could not prove the cluster's secret (its AM_CLUSTER_TOKEN differs from this process's)");
  auto proof = client_proof(secret, h.nonce, a->nonce);
  stopped = send_all(fd, std::string_view(reinterpret_cast<const char*>(proof.data()), proof.size()), peer, deadline,
                     "sending this process's proof");
  if (stopped.why.empty())
    stopped = receive_exactly(fd, 1, bytes, peer, deadline, "waiting for the guard's verdict");
  if (!stopped.why.empty())
    return stopped;
  if (bytes[0] != '\0')
    return refusal(who + " refused this process's proof of the cluster's secret (its AM_CLUSTER_TOKEN differs from "
                         "this process's)");
  return {};
}

} // namespace am::detail::guard
