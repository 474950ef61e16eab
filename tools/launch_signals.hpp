/// `actormesh launch`: SIGINT, SIGTERM and SIGCHLD as readable events for a poll() loop.
#pragma once

#include <csignal>
#include <vector>

namespace am::tools {

/// While it lives, SIGINT, SIGTERM and SIGCHLD are caught (SA_RESTART) and their numbers written to
/// a non-blocking pipe whose read end fd() a poll() loop watches; the handlers that were in place
/// are restored by the destructor. One at a time per process: a second throws am::runtime_error.
class signal_events {
public:
  /// Installs the handlers; throws am::runtime_error when the pipe cannot be made.
  signal_events();
  ~signal_events();
  signal_events(const signal_events&) = delete;
  signal_events& operator=(const signal_events&) = delete;

  /// The read end to poll for POLLIN.
  int fd() const noexcept { return read_fd_; }

  /// The signals caught since the last call, in order (a burst of SIGCHLD may come as one).
  std::vector<int> take();

  /// The first SIGINT or SIGTERM caught since construction, or 0: for loops that do not poll.
  static int first_stop_signal() noexcept;

private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  struct sigaction old_int_{}, old_term_{}, old_chld_{};
};

} // namespace am::tools
