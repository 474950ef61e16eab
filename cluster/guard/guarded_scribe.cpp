#include "cluster/guard/guarded_scribe.hpp"

#include "actors/detail/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/interfaces.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/receive_policy.hpp>
#include <caf/io/scribe.hpp>
#include <caf/openssl/session.hpp>
#include <caf/policy/tcp.hpp>

#include <algorithm>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace am::detail::guard {

namespace {

using caf::io::network::native_socket;
using caf::io::network::rw_state;

/// Payloads larger than this are read in pieces of this size.
constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

/// CAF's OpenSSL session as a stream policy (what libcaf_openssl does internally; its own policy
/// is not public). Our listener accepts, so try_accept is never called.
class tls_policy {
public:
  explicit tls_policy(caf::openssl::session_ptr session) : session_(std::move(session)) {}

  rw_state read_some(std::size_t& result, native_socket fd, void* buf, std::size_t len) {
    return session_->read_some(result, fd, buf, len);
  }
  rw_state write_some(std::size_t& result, native_socket fd, const void* buf, std::size_t len) {
    return session_->write_some(result, fd, buf, len);
  }
  bool try_accept(native_socket&, native_socket) { return false; }
  bool must_read_more(native_socket fd, std::size_t threshold) { return session_->must_read_more(fd, threshold); }

private:
  caf::openssl::session_ptr session_;
};

template <class Policy>
class guarded_scribe final : public caf::io::scribe {
public:
  template <class... Ts>
  guarded_scribe(caf::io::network::default_multiplexer& mpx, native_socket fd, bool tls,
                 std::unique_ptr<frame_check> check, std::shared_ptr<void> slot, Ts&&... policy_args)
    : scribe(caf::io::network::conn_hdl_from_socket(fd)),
      tls_(tls),
      check_(std::move(check)),
      slot_(std::move(slot)),
      stream_(mpx, fd, std::forward<Ts>(policy_args)...) {}

  void configure_read(caf::io::receive_policy::config config) override {
    using caf::io::receive_policy_flag;
    if (config.first == receive_policy_flag::exactly && config.second > chunk_bytes) {
      large_size_ = config.second;
      large_.clear();
      stream_.configure_read(caf::io::receive_policy::exactly(chunk_bytes));
    } else {
      large_size_ = 0;
      stream_.configure_read(config);
    }
    if (!launched_)
      launch();
  }

  bool consume(caf::execution_unit* ctx, const void* buf, std::size_t num_bytes) override {
    if (detached())
      return false;
    auto* bytes = static_cast<const char*>(buf);
    if (large_size_ == 0) {
      if (auto why = check_->next(bytes, num_bytes); !why.empty())
        return refuse(ctx, why);
      return scribe::consume(ctx, buf, num_bytes);
    }
    large_.insert(large_.end(), bytes, bytes + num_bytes);
    if (large_.size() < large_size_) {
      stream_.configure_read(caf::io::receive_policy::exactly(std::min(chunk_bytes, large_size_ - large_.size())));
      return true;
    }
    if (auto why = check_->next(large_.data(), large_.size()); !why.empty())
      return refuse(ctx, why);
    large_size_ = 0;
    rd_buf().swap(large_);
    std::vector<char>().swap(large_);
    auto size = rd_buf().size();
    auto result = scribe::consume(ctx, rd_buf().data(), size);
    std::vector<char>().swap(rd_buf()); // the next read needs 32 bytes, not the large buffer
    return result;
  }

  void ack_writes(bool enable) override { stream_.ack_writes(enable); }
  std::vector<char>& wr_buf() override { return stream_.wr_buf(); }
  std::vector<char>& rd_buf() override { return stream_.rd_buf(); }

  void graceful_shutdown() override {
    stream_.graceful_shutdown();
    detach(&stream_.backend(), false);
  }

  void flush() override { stream_.flush(this); }

  std::string addr() const override {
    auto x = caf::io::network::remote_addr_of_fd(stream_.fd());
    return x ? *x : std::string();
  }

  std::uint16_t port() const override {
    auto x = caf::io::network::remote_port_of_fd(stream_.fd());
    return x ? *x : 0;
  }

  void add_to_loop() override { stream_.activate(this); }
  void remove_from_loop() override { stream_.passivate(); }

private:
  void launch() {
    launched_ = true;
    stream_.start(this);
    // A TLS session may still have its handshake to drive: schedule one write, as CAF's own
    // OpenSSL scribe does.
    if (tls_)
      stream_.force_empty_write(this);
  }

  /// Ends the connection: CAF's broker is told it closed (and forgets the node it named), the
  /// peer sees it closed at once.
  bool refuse(caf::execution_unit* ctx, const std::string& why) {
    log(log_level::warning, "cluster guard: closed the connection from {}:{}: {}", addr(), port(), why);
    ::shutdown(stream_.fd(), SHUT_RDWR);
    io_failure(ctx, caf::io::network::operation::read);
    return false;
  }

  bool launched_ = false;
  bool tls_;
  std::unique_ptr<frame_check> check_;
  std::shared_ptr<void> slot_;
  std::size_t large_size_ = 0;
  std::vector<char> large_;
  caf::io::network::stream_impl<Policy> stream_;
};

} // namespace

caf::io::scribe_ptr make_guarded_scribe(caf::actor_system& system, int fd, socket_side side, bool tls,
                                        std::unique_ptr<frame_check> check, std::shared_ptr<void> slot) {
  auto& mpx = static_cast<caf::io::network::default_multiplexer&>(system.middleman().backend());
  caf::io::network::nonblocking(fd, true);
  if (!tls)
    return caf::make_counted<guarded_scribe<caf::policy::tcp>>(mpx, fd, false, std::move(check), std::move(slot));
  auto session = caf::openssl::make_session(system, fd, side == socket_side::accepted);
  if (!session) {
    ::close(fd);
    return nullptr;
  }
  return caf::make_counted<guarded_scribe<tls_policy>>(mpx, fd, true, std::move(check), std::move(slot),
                                                       std::move(session));
}

} // namespace am::detail::guard
