#include "cluster/guard/guarded_listener.hpp"

#include "cluster/guard/guard_protocol.hpp"
#include "cluster/guard/guarded_scribe.hpp"
#include "cluster/listen_socket.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/scribe.hpp>
#include <caf/send.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <list>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace am::detail::guard {

namespace {

using clock = std::chrono::steady_clock;

/// One connection still in its handshake.
struct pending {
  int fd = -1;
  std::string address;
  clock::time_point deadline;
  server_handshake handshake;
  std::string out; ///< bytes still to send
};

std::string peer_address(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text, sizeof text);
  else if (addr.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text, sizeof text);
  return text;
}

int bind_listener(const std::string& address, std::uint16_t port, std::uint16_t& bound_port) {
  auto socket = listen_socket(address, port, 128, true);
  if (socket.fd < 0)
    throw runtime_error("The coordinator cannot listen on " + address + ":" + std::to_string(port) + ": " + socket.why);
  bound_port = socket.port;
  return socket.fd;
}

} // namespace

/// What the listener's thread and the connections it handed over share; it outlives the listener
/// while a handed-over connection still counts itself.
struct listener_state : std::enable_shared_from_this<listener_state> {
  caf::actor_system* system = nullptr;
  caf::actor broker;                ///< CAF's BASP broker
  caf::strong_actor_ptr published;
  listener_settings settings;
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  std::uint16_t port = 0;
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> held{0}; ///< connections held: in the handshake and handed over
  std::shared_ptr<node_bindings> bindings = std::make_shared<node_bindings>();
  std::list<pending> handshakes;
  std::map<std::string, std::size_t> handshakes_by_address;
  clock::time_point last_refusal_log{};
  clock::time_point accept_paused_until{}; ///< at the descriptor limit: let handshakes end first

  void run();
  void accept_new();
  void serve(pending& p, short revents);
  void finish(std::list<pending>::iterator it, bool admitted);
  void hand_over(pending& p);
  void log_refusal(const std::string& what);
};

void listener_state::log_refusal(const std::string& what) {
  auto now = clock::now();
  if (now - last_refusal_log < std::chrono::seconds(1))
    return;
  last_refusal_log = now;
  log(log_level::warning, "cluster guard: {}", what);
}

void listener_state::accept_new() {
  for (int round = 0; round < 64; ++round) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // The port stays readable: wait a little instead of spinning on it.
        accept_paused_until = clock::now() + std::chrono::milliseconds(100);
        log_refusal("cannot accept a connection: this process is at its file descriptor limit (ulimit -n); "
                    "set AM_MAX_CONNECTIONS below it");
      }
      return;
    }
    auto address = peer_address(addr);
    std::string refused;
    if (held.load() >= settings.max_connections)
      refused = "at the limit of " + std::to_string(settings.max_connections) + " connections (AM_MAX_CONNECTIONS)";
    else if (handshakes.size() >= settings.max_handshakes)
      refused = "at the limit of " + std::to_string(settings.max_handshakes) + " connections in their handshake";
    else if (handshakes_by_address[address] >= settings.max_handshakes_per_address)
      refused = "at the limit of " + std::to_string(settings.max_handshakes_per_address)
                + " connections in their handshake from one address";
    if (!refused.empty()) {
      ::close(fd);
      log_refusal("refused a connection from " + address + ": " + refused);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ++held;
    ++handshakes_by_address[address];
    handshakes.push_back(pending{fd, address, clock::now() + settings.handshake_timeout,
                                 server_handshake(settings.secret), {}});
  }
}

void listener_state::serve(pending& p, short revents) {
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    char buf[128];
    auto want = std::min(p.handshake.wanted(), sizeof buf);
    if (want > 0) {
      auto n = ::recv(p.fd, buf, want, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        p.deadline = clock::time_point{}; // closed by the peer: drop it
        return;
      }
      if (n > 0)
        p.handshake.feed(std::string_view(buf, static_cast<std::size_t>(n)), p.out);
    }
  }
  while (!p.out.empty()) {
    auto n = ::send(p.fd, p.out.data(), p.out.size(), MSG_NOSIGNAL);
    if (n <= 0)
      break;
    p.out.erase(0, static_cast<std::size_t>(n));
  }
}

void listener_state::finish(std::list<pending>::iterator it, bool admitted) {
  if (--handshakes_by_address[it->address] == 0)
    handshakes_by_address.erase(it->address);
  if (admitted) {
    hand_over(*it);
  } else {
    ::close(it->fd);
    --held;
  }
  handshakes.erase(it);
}

void listener_state::hand_over(pending& p) {
  // The slot counts the connection until CAF destroys its scribe.
  std::shared_ptr<void> slot(nullptr, [state = shared_from_this()](void*) { --state->held; });
  auto check = std::make_unique<frame_check>(frame_check::peer::member, settings.max_frame_bytes, system->node(),
                                             bindings);
  auto scribe = make_guarded_scribe(*system, p.fd, socket_side::accepted, settings.tls, std::move(check), slot);
  if (!scribe) {
    log(log_level::warning, "cluster guard: no TLS session for the connection from {}", p.address);
    return; // the slot's release counts it out
  }
  caf::anon_send(broker, caf::publish_atom::value, std::move(scribe), port, published, std::set<std::string>{});
}

void listener_state::run() {
  std::vector<pollfd> fds;
  while (!stop.load()) {
    fds.clear();
    fds.push_back({wake[0], POLLIN, 0});
    // Connections over a limit are accepted and closed at once (a connecting peer then learns it
    // at once instead of waiting in the kernel's queue), except at the descriptor limit.
    auto now = clock::now();
    bool can_accept = now >= accept_paused_until;
    fds.push_back({can_accept ? listen_fd : -1, POLLIN, 0});
    auto wait = std::chrono::milliseconds(can_accept ? 500 : 100);
    for (auto& p : handshakes) {
      fds.push_back({p.fd, static_cast<short>(POLLIN | (p.out.empty() ? 0 : POLLOUT)), 0});
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - now));
    }
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(wait.count(), 0)));
    if (rc < 0 && errno != EINTR)
      break;
    if (fds[0].revents & POLLIN) {
      char drain[16];
      while (::read(wake[0], drain, sizeof drain) > 0) {
      }
    }
    if (stop.load())
      break;
    std::size_t i = 2;
    now = clock::now();
    for (auto it = handshakes.begin(); it != handshakes.end(); ++i) {
      if (fds[i].revents != 0)
        serve(*it, fds[i].revents);
      auto state = it->handshake.current();
      bool sent = it->out.empty();
      auto next = std::next(it);
      if (state == server_handshake::state::admitted && sent) {
        finish(it, true);
      } else if (state == server_handshake::state::refused && sent) {
        log(log_level::warning, "cluster guard: refused a connection from {}: {}", it->address,
            it->handshake.reason());
        finish(it, false);
      } else if (now >= it->deadline) {
        if (it->deadline != clock::time_point{})
          log(log_level::info, "cluster guard: dropped a connection from {} that did not finish its handshake "
              "within {} ms", it->address, settings.handshake_timeout.count());
        finish(it, false);
      }
      it = next;
    }
    if (fds[1].revents & POLLIN)
      accept_new();
  }
  for (auto& p : handshakes) {
    ::close(p.fd);
    --held;
  }
  handshakes.clear();
}

guarded_listener::guarded_listener(caf::actor_system& system, caf::actor published, listener_settings settings)
  : state_(std::make_shared<listener_state>()) {
  auto& s = *state_;
  s.system = &system;
  s.broker = system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  s.published = caf::actor_cast<caf::strong_actor_ptr>(published);
  s.settings = std::move(settings);
  s.listen_fd = bind_listener(s.settings.address, s.settings.port, s.port);
  if (::pipe2(s.wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    ::close(s.listen_fd);
    throw runtime_error(std::string("the cluster guard cannot make its wake-up pipe: ") + std::strerror(errno));
  }
  thread_ = std::thread([state = state_] { state->run(); });
}

guarded_listener::~guarded_listener() {
  state_->stop = true;
  char one = 1;
  [[maybe_unused]] auto n = ::write(state_->wake[1], &one, 1);
  if (thread_.joinable())
    thread_.join();
  ::close(state_->listen_fd);
  ::close(state_->wake[0]);
  ::close(state_->wake[1]);
}

std::uint16_t guarded_listener::port() const noexcept {
  return state_->port;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]")
    return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

} // namespace am::detail::guard
