#include "cluster/guard/guarded_connect.hpp"

#include "cluster/guard/client_handshake.hpp"
#include "cluster/guard/guard_protocol.hpp"
#include "cluster/guard/guarded_scribe.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/scribe.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

#include <netdb.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace am::detail::guard {

namespace {

using clock = std::chrono::steady_clock;

/// A connected non-blocking socket to the first of `s.host`'s addresses that answers, or -1 with
/// `why` set (`at_deadline`: the deadline ended the wait).
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
  for (auto* a = found; a != nullptr && fd < 0; a = a->ai_next)
    fd = connect_socket(a->ai_addr, a->ai_addrlen, deadline, why, at_deadline);
  ::freeaddrinfo(found);
  return fd;
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
  auto outcome = run_client_handshake(fd, s.secret, "the coordinator", deadline);
  if (outcome.unanswered)
    outcome.why += " (the coordinator may be at its connection limit, AM_MAX_CONNECTIONS, or still starting)";
  if (!outcome.why.empty())
    return failed(fd, outcome.why, outcome.final, outcome.at_deadline);
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
