// `actormesh launch`: the self-pipe that turns signals into poll() events.
#include "tools/launch_signals.hpp"

#include "actormesh/actors/errors.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace am::tools {

namespace {

std::atomic<int> pipe_write_fd{-1};
volatile std::sig_atomic_t stop_signal = 0;

extern "C" void on_signal(int sig) {
  const int saved = errno;
  if ((sig == SIGINT || sig == SIGTERM) && stop_signal == 0)
    stop_signal = sig;
  const int fd = pipe_write_fd.load();
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(sig);
    [[maybe_unused]] auto written = ::write(fd, &byte, 1); // a full pipe already wakes the loop
  }
  errno = saved;
}

void install(int sig, struct sigaction& old) {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | (sig == SIGCHLD ? SA_NOCLDSTOP : 0);
  ::sigaction(sig, &action, &old);
}

} // namespace

signal_events::signal_events() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC | O_NONBLOCK) != 0)
    throw am::runtime_error(std::string("actormesh launch: cannot create a pipe: ") + std::strerror(errno));
  int expected = -1;
  if (!pipe_write_fd.compare_exchange_strong(expected, fds[1])) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw am::runtime_error("actormesh launch: another launch is already running in this process");
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  stop_signal = 0;
  install(SIGINT, old_int_);
  install(SIGTERM, old_term_);
  install(SIGCHLD, old_chld_);
}

signal_events::~signal_events() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGCHLD, &old_chld_, nullptr);
  pipe_write_fd.store(-1);
  ::close(read_fd_);
  ::close(write_fd_);
}

std::vector<int> signal_events::take() {
  std::vector<int> result;
  std::array<unsigned char, 256> bytes;
  for (;;) {
    const auto got = ::read(read_fd_, bytes.data(), bytes.size());
    if (got <= 0)
      break;
    result.insert(result.end(), bytes.begin(), bytes.begin() + got);
  }
  return result;
}

int signal_events::first_stop_signal() noexcept {
  return stop_signal;
}

} // namespace am::tools
