#include "devices/collectives/authenticated_pair.hpp"

#include "cluster/guard/client_handshake.hpp"

#include <gloo/common/error.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace am::detail {

namespace {

using clock = std::chrono::steady_clock;
using gloo::transport::tcp::Address;

/// Connects to `peer` once and proves `key`: the connected socket, or -1 with `why` (and `final`
/// when retrying cannot help) set.
int connect_and_prove(const sockaddr_storage& peer, const std::string& key, const std::string& peer_name,
                      clock::time_point deadline, std::string& why, bool& final) {
  const socklen_t length = peer.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  bool at_deadline = false;
  int fd = guard::connect_socket(reinterpret_cast<const sockaddr*>(&peer), length, deadline, why, at_deadline);
  if (fd < 0)
    return -1;
  auto outcome = guard::run_client_handshake(fd, key, peer_name, deadline);
  if (outcome.why.empty())
    return fd;
  ::close(fd);
  why = outcome.why;
  final = outcome.final;
  return -1;
}

} // namespace

void pair_candidate::handleEvents(int) { owner->on_candidate(*this); }

authenticated_pair::authenticated_pair(gloo::transport::tcp::Context* context, gloo::transport::tcp::Device* device,
                                       int self_rank, int peer_rank, std::chrono::milliseconds timeout,
                                       std::string key)
    : Pair(context, device, peer_rank, timeout), peer_rank_(peer_rank), listens_(self_rank < peer_rank),
      key_(std::move(key)) {
  std::lock_guard<std::mutex> lock(m_);
  for (auto& c : candidates_)
    c.owner = this;
  if (!listens_) {
    // The connecting side needs no listener: nobody may connect to it.
    close_listener();
    return;
  }
  // Candidates are accepted until none is left, so the listener must not block; Gloo's backlog of
  // one would let a stranger's pending connect delay the peer's.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK) < 0 || ::listen(fd_, int(max_candidates)) < 0)
    signalAndThrowException(GLOO_ERROR_MSG("listen: ", std::strerror(errno)));
}

authenticated_pair::~authenticated_pair() {
  std::lock_guard<std::mutex> lock(m_);
  drop_all();
  if (state_ == LISTENING)
    close_listener();
  // Leave Gloo's loop while this is still an authenticated_pair, with the soft close ~Pair would
  // make: left to ~Pair, the connected socket stayed registered after this destructor ended, and
  // the loop thread could enter handleEvents between the two and read members already destroyed
  // (UBSan, under ctest -j2: "member access within address ... object is of type
  // 'gloo::transport::tcp::Pair'"). Gloo's loop skips a pair whose lock is held.
  if (state_ != CLOSED)
    changeState(CLOSED);
}

void authenticated_pair::connect(const std::vector<char>& bytes) {
  std::unique_lock<std::mutex> lock(m_);
  throwIfException();
  peer_ = Address(bytes);
  if (listens_) {
    // Until the creation's deadline (Gloo's own pair waits five times as long).
    const bool up = cv_.wait_for(lock, timeout_, [&] {
      throwIfException();
      return state_ >= CONNECTED;
    });
    if (!up)
      signalAndThrowException(GLOO_ERROR_MSG("Connect timeout ", peer_.str(), " (rank ", peer_rank_,
                                             " did not connect and prove the communicator's key)"));
    return;
  }
  changeState(CONNECTING);
  const sockaddr_storage target = peer_.getSockaddr();
  const std::string peer_name = "the collectives listener of rank " + std::to_string(peer_rank_);
  const auto deadline = clock::now() + timeout_;
  std::string why = "no attempt made";
  while (true) {
    bool final = false;
    lock.unlock();
    const int fd = connect_and_prove(target, key_, peer_name, std::min(deadline, clock::now() + attempt_deadline),
                                     why, final);
    lock.lock();
    if (state_ != CONNECTING) { // closed or aborted while this thread connected
      if (fd >= 0)
        ::close(fd);
      throwIfException();
      signalAndThrowException(GLOO_ERROR_MSG("Pair closed while connecting to ", peer_.str()));
    }
    if (fd >= 0) {
      fd_ = fd;
      if (!hand_to_gloo())
        throwIfException();
      return;
    }
    if (final)
      signalAndThrowException(GLOO_ERROR_MSG("Connect ", peer_.str(), " refused: ", why));
    if (clock::now() >= deadline)
      signalAndThrowException(GLOO_ERROR_MSG("Connect timeout ", peer_.str(), " (last attempt: ", why, ")"));
    // The listener may be full of strangers' candidates for a moment: try again soon.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

void authenticated_pair::handleEvents(int events) {
  {
    // Under the pair's lock, as Gloo's own handler takes it: the loop thread then sees the members
    // this pair's constructor wrote after Gloo's registered its listener (found by TSan).
    std::unique_lock<std::mutex> lock(m_, std::try_to_lock);
    if (!lock)
      return; // Gloo's loop calls again on its next tick (level-triggered)
    // An event taken from epoll before the pair closed (aborted from another thread, or failed
    // as it formed): Gloo's handler enforces that a closed pair gets none, and its throw would end
    // the process (seen once at 32 processes: "state_ <= CONNECTED. 5 vs 4").
    if (state_ == CLOSED || ex_ != nullptr)
      return;
    if (listens_ && !admitted_.load(std::memory_order_acquire) && state_ == LISTENING) {
      accept_candidates();
      return;
    }
  }
  Pair::handleEvents(events); // the connected pair's hot path is Gloo's own
}

void authenticated_pair::accept_candidates() {
  while (true) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) // out of descriptors or memory: as Gloo's own pair
        signalException(GLOO_ERROR_MSG("accept: ", std::strerror(errno)));
      return;
    }
    pair_candidate* c = free_candidate();
    if (c == nullptr) {
      ::close(fd);
      continue;
    }
    c->fd = fd;
    c->handshake.emplace(key_);
    c->since = clock::now();
    device_->registerDescriptor(fd, EPOLLIN, c);
  }
}

pair_candidate* authenticated_pair::free_candidate() {
  pair_candidate* oldest = nullptr;
  for (auto& c : candidates_) {
    if (c.fd < 0)
      return &c;
    if (oldest == nullptr || c.since < oldest->since)
      oldest = &c;
  }
  if (clock::now() - oldest->since < candidate_deadline)
    return nullptr;
  drop(*oldest);
  return oldest;
}

void authenticated_pair::on_candidate(pair_candidate& c) {
  std::unique_lock<std::mutex> lock(m_, std::try_to_lock);
  if (!lock || c.fd < 0)
    return; // busy (called again next tick) or an event queued before the candidate was dropped
  if (state_ != LISTENING) {
    drop(c);
    return;
  }
  char buf[128];
  const auto got = ::recv(c.fd, buf, std::min(sizeof buf, c.handshake->wanted()), 0);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return;
  if (got <= 0) {
    drop(c);
    return;
  }
  std::string out;
  c.handshake->feed(std::string_view(buf, static_cast<std::size_t>(got)), out);
  // Each answer is a few dozen bytes on a fresh connection: it fits the socket's buffer at once.
  if (!out.empty() && ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
    drop(c);
    return;
  }
  if (c.handshake->current() == guard::server_handshake::state::refused)
    drop(c);
  else if (c.handshake->current() == guard::server_handshake::state::admitted)
    admit(c);
}

void authenticated_pair::drop(pair_candidate& c) {
  device_->unregisterDescriptor(c.fd, &c);
  ::close(c.fd);
  c.fd = -1;
  c.handshake.reset();
}

void authenticated_pair::drop_all() {
  for (auto& c : candidates_)
    if (c.fd >= 0)
      drop(c);
}

void authenticated_pair::admit(pair_candidate& c) {
  const int fd = c.fd;
  device_->unregisterDescriptor(fd, &c);
  c.fd = -1;
  c.handshake.reset();
  close_listener();
  drop_all();
  fd_ = fd;
  admitted_.store(true, std::memory_order_release);
  hand_to_gloo(); // on Gloo's loop thread: a failure is the pair's, which its waiter reports
}

bool authenticated_pair::hand_to_gloo() {
  try {
    handleConnected(); // Gloo's own: addresses, socket options, the loop's registration, CONNECTED
    return true;
  } catch (const std::exception& e) {
    // The peer reset the connection since it proved the key (getpeername: not connected). The
    // socket never reached Gloo's loop: closed here, so that closing the pair does not unregister it.
    ::close(fd_);
    fd_ = -1;
    signalException(GLOO_ERROR_MSG("the connection with rank ", peer_rank_, " closed as it formed (", e.what(), ")"));
    return false;
  }
}

void authenticated_pair::close_listener() {
  if (fd_ < 0)
    return;
  device_->unregisterDescriptor(fd_, this);
  ::close(fd_);
  fd_ = -1;
}

} // namespace am::detail
