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
#include <caf/sec.hpp>

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
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

/// A connected non-blocking socket, or -1 with `why` set (`at_deadline`: the deadline ended the wait).
int open_connection(const connect_settings& s, clock::time_point deadline, std::string& why, bool& at_deadline) {
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
      at_deadline = !wait_for(fd, POLLOUT, deadline);
      if (!at_deadline) {
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

/// Why a step of the handshake stopped early; `why` is empty when it completed.
struct step_result {
  std::string why;
  bool at_deadline = false; ///< the deadline ended it: it says nothing about the coordinator
};

step_result io_failure(ssize_t n, const char* what) {
  if (n == 0)
    return {std::string("the coordinator closed the connection while ") + what, false};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    return {std::string("no answer before the deadline while ") + what, true};
  return {std::string(std::strerror(errno)) + " while " + what, false};
}

/// Sends all of `bytes`.
step_result send_all(int fd, std::string_view bytes, clock::time_point deadline, const char* what) {
  while (!bytes.empty()) {
    auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && wait_for(fd, POLLOUT, deadline))
      continue;
    return io_failure(n < 0 ? n : -1, what);
  }
  return {};
}

/// Reads exactly `n` bytes.
step_result receive_exactly(int fd, std::size_t n, std::string& out, clock::time_point deadline, const char* what) {
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
    return io_failure(got, what);
  }
  return {};
}

connect_result failed(int fd, std::string why, bool final, bool cut_short = false) {
  if (fd >= 0)
    ::close(fd);
  return {caf::actor{}, std::move(why), final, cut_short};
}

} // namespace

connect_result guarded_connect(caf::actor_system& system, const connect_settings& s, clock::time_point deadline) {
  std::string why;
  bool at_deadline = false;
  int fd = open_connection(s, deadline, why, at_deadline);
  if (fd < 0)
    return failed(fd, why, false, at_deadline);
  hello h{!s.secret.empty(), random_bytes(nonce_size)};
  std::string bytes;
  auto stopped = send_all(fd, encode(h), deadline, "sending the guard's hello");
  if (stopped.why.empty())
    stopped = receive_exactly(fd, answer_size, bytes, deadline, "waiting for the guard's answer");
  if (!stopped.why.empty())
    return failed(fd, stopped.why + " (the coordinator may be at its connection limit, AM_MAX_CONNECTIONS, or "
                      "still starting)", false, stopped.at_deadline);
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
  stopped = send_all(fd, std::string_view(reinterpret_cast<const char*>(proof.data()), proof.size()), deadline,
                     "sending this process's proof");
  if (stopped.why.empty())
    stopped = receive_exactly(fd, 1, bytes, deadline, "waiting for the guard's verdict");
  if (!stopped.why.empty())
    return failed(fd, stopped.why, false, stopped.at_deadline);
  if (bytes[0] != '\0')
    return failed(fd, "the coordinator refused this process's proof of the cluster's secret (its "
                      "AM_CLUSTER_TOKEN differs from this process's)", true);
  auto check = std::make_unique<frame_check>(frame_check::peer::coordinator, s.max_frame_bytes, system.node(), nullptr);
  auto scribe = make_guarded_scribe(system, fd, socket_side::connected, s.tls, std::move(check), nullptr);
  // A TLS session that fails at its first step is the refusal CAF reports when the handshake fails
  // later: say it the same way, so that one hint explains both.
  if (!scribe)
    return {caf::actor{}, system.render(caf::sec::disconnect_during_handshake), false};
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
      [&](const caf::error& err) {
        result.error = system.render(err);
        result.cut_short = err == caf::sec::request_timeout; // the request's timeout is the deadline
      });
  return result;
}

connect_result guarded_connect_until(caf::actor_system& system, const connect_settings& s,
                                     clock::time_point deadline) {
  connect_result last{caf::actor{}, "no attempt made", false};
  while (clock::now() < deadline) {
    auto result = guarded_connect(system, s, deadline);
    if (result.found || result.final)
      return result;
    if (!result.cut_short || last.error == "no attempt made")
      last.error = result.error;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return last;
}

} // namespace am::detail::guard
