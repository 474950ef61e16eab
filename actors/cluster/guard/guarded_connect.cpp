#include "actors/cluster/guard/guarded_connect.hpp"

#include "actors/cluster/guard/guard_protocol.hpp"
#include "actors/cluster/guard/guarded_scribe.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/scribe.hpp>
#include <caf/scoped_actor.hpp>

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace am::detail::guard {

namespace {

using clock = std::chrono::steady_clock;

int millis_left(clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
  return static_cast<int>(std::max<std::int64_t>(left, 0));
}

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

/// A connected non-blocking socket, or -1 with `why` set.
int open_connection(const connect_settings& s, clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  auto service = std::to_string(s.port);
  if (int rc = ::getaddrinfo(s.host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    why = std::string("cannot resolve the host: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  why = "no address";
  for (auto* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      err = ETIMEDOUT;
      if (wait_for(fd, POLLOUT, deadline)) {
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
    if (err != 0) {
      why = std::strerror(err);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

bool send_all(int fd, std::string_view bytes, clock::time_point deadline) {
  while (!bytes.empty()) {
    auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && wait_for(fd, POLLOUT, deadline))
      continue;
    return false;
  }
  return true;
}

/// Reads exactly `n` bytes; false on a close, an error or the deadline.
bool receive_exactly(int fd, std::size_t n, std::string& out, clock::time_point deadline) {
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
    return false;
  }
  return true;
}

connect_result failed(int fd, std::string why, bool final) {
  if (fd >= 0)
    ::close(fd);
  return {caf::actor{}, std::move(why), final};
}

} // namespace

connect_result guarded_connect(caf::actor_system& system, const connect_settings& s, clock::time_point deadline) {
  std::string why;
  int fd = open_connection(s, deadline, why);
  if (fd < 0)
    return failed(fd, why, false);
  hello h{!s.secret.empty(), random_bytes(nonce_size)};
  std::string bytes;
  if (!send_all(fd, encode(h), deadline) || !receive_exactly(fd, answer_size, bytes, deadline))
    return failed(fd,
                  "the coordinator closed the connection or did not answer the guard's handshake (it may be at "
                  "its connection limit, AM_MAX_CONNECTIONS, or still starting)",
                  false);
  auto a = decode_answer(bytes);
  if (!a)
    return failed(fd, "the process at that address does not speak actormesh's guard protocol (another program, "
                      "or an actormesh of another version)", true);
  if (a->verdict == verdict::secret_needed)
    return failed(fd, "the coordinator requires the cluster's secret and this process has none: give every process "
                      "the same AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE", true);
  if (!a->has_secret && !s.secret.empty())
    return failed(fd, "this process holds a cluster secret but the coordinator has none: give every process the "
                      "same AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE", true);
  if (!s.secret.empty() && !equal_macs(a->proof, server_proof(s.secret, h.nonce, a->nonce)))
    return failed(fd, "the coordinator could not prove the cluster's secret (its AM_CLUSTER_TOKEN differs from "
                      "this process's)", true);
  auto proof = client_proof(s.secret, h.nonce, a->nonce);
  if (!send_all(fd, std::string_view(reinterpret_cast<const char*>(proof.data()), proof.size()), deadline)
      || !receive_exactly(fd, 1, bytes, deadline))
    return failed(fd, "the coordinator closed the connection during the guard's handshake", false);
  if (bytes[0] != '\0')
    return failed(fd, "the coordinator refused this process's proof of the cluster's secret (its "
                      "AM_CLUSTER_TOKEN differs from this process's)", true);
  auto check = std::make_unique<frame_check>(frame_check::peer::coordinator, s.max_frame_bytes, system.node(), nullptr);
  auto scribe = make_guarded_scribe(system, fd, socket_side::connected, s.tls, std::move(check), nullptr);
  if (!scribe)
    return {caf::actor{},
            "the TLS handshake failed at once (the coordinator may not use TLS, or refused this process's "
            "certificate)",
            false};
  auto broker = system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  connect_result result;
  caf::scoped_actor self{system};
  auto left = std::chrono::milliseconds(std::max(millis_left(deadline), 1));
  self->request(broker, left, caf::connect_atom::value, std::move(scribe), s.port)
    .receive(
      [&](const caf::node_id&, const caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        result.found = caf::actor_cast<caf::actor>(ptr);
        if (!result.found)
          result.error = "nothing is published at that port";
      },
      [&](const caf::error& err) { result.error = system.render(err); });
  return result;
}

} // namespace am::detail::guard
