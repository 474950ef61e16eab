/// `actormesh launch`: running N copies of a program on the launcher's host and supervising them.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace am::tools {

/// The most processes one launch starts (each costs two pipes and a process on the host).
inline constexpr int max_launch_processes = 1024;

/// A launch as the command line describes it, already checked (launch_command.cpp).
struct launch_options {
  /// -n: how many processes, 1..max_launch_processes.
  int num_processes = 1;
  /// --cpu-devices: AM_CPU_DEVICES for every child; unset leaves the launcher's own variable.
  std::optional<int> cpu_devices;
  /// --coordinator-port: the port of AM_COORDINATOR; unset: a free one.
  std::optional<int> coordinator_port;
  /// --grace: seconds from SIGTERM (or a forwarded signal) to SIGKILL when stopping.
  double grace_seconds = 5;
  /// --timeout: seconds after which everything is stopped and the launch exits 124; unset: none.
  std::optional<double> timeout_seconds;
  /// The program and its arguments; never empty.
  std::vector<std::string> command;
};

/// Starts options.num_processes copies of options.command, each with its cluster variables
/// (launch_environment.hpp), and supervises them until all have ended: every output line goes to
/// `out` or `err` prefixed with "[i] "; SIGINT and SIGTERM are forwarded to the running children (a
/// second one, or the grace period running out, sends SIGKILL); the first process that fails (exits
/// non-zero or is killed by a signal), or one that cannot be started, stops the rest (SIGTERM, then
/// SIGKILL after the grace period). Ends with at most one line on `err` saying why it stopped.
/// Returns the launcher's exit status: 0 when all succeeded; the failed process's status, or 128 +
/// its signal; 127 (not found) or 126 when the program cannot be run, 1 when a process cannot be
/// started for another reason; 128 + the signal received; 124 on timeout. Throws am::error (nothing
/// started) when the coordinator port cannot be had.
int run_launch(const launch_options& options, std::ostream& out, std::ostream& err);

} // namespace am::tools
