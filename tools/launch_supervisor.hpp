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
  /// -n: how many processes this launcher starts (on this node), 1..max_launch_processes.
  int num_processes = 1;
  /// --nnodes: how many launchers (one a machine) start processes of the same cluster.
  int num_nodes = 1;
  /// --node-rank: this launcher's place among them; its processes are node_rank * num_processes
  /// .. that + num_processes - 1.
  int node_rank = 0;
  /// --cpu-devices: AM_CPU_DEVICES for every child; unset leaves the launcher's own variable.
  std::optional<int> cpu_devices;
  /// The coordinator's host (--rdzv's); unset: 127.0.0.1, on this machine.
  std::optional<std::string> coordinator_host;
  /// --coordinator-port or --rdzv's port; unset: a free one on 127.0.0.1, picked anew each attempt.
  std::optional<int> coordinator_port;
  /// --grace: seconds from SIGTERM (or a forwarded signal) to SIGKILL when stopping.
  double grace_seconds = 5;
  /// --timeout: seconds after which everything is stopped and the launch exits 124; unset: none.
  std::optional<double> timeout_seconds;
  /// --max-restarts: how many times the whole group is started again after a process failed.
  int max_restarts = 0;
  /// --keep-going: a failed process leaves the others running (see run_launch).
  bool keep_going = false;
  /// --log-dir: each process's stdout and stderr also go, unprefixed, to
  /// DIR/attempt_<k>/<process>/stdout.log and stderr.log (k: 0, then one more each restart).
  std::optional<std::string> log_dir;
  /// --ranks-filter: the processes whose lines are shown on the console, sorted, each once (all
  /// when empty).
  std::vector<int> ranks_filter;
  /// The program and its arguments; never empty.
  std::vector<std::string> command;

  /// The process id of this launcher's first process.
  int first_process() const { return node_rank * num_processes; }
  /// The processes of the whole cluster, every node's.
  int world_size() const { return num_nodes * num_processes; }
};

/// Starts options.num_processes copies of options.command, each with its cluster variables
/// (launch_environment.hpp), and supervises them until all have ended. First it writes
/// "actormesh launch: coordinator HOST:PORT, processes A-B of N" on `err` (again at each restart),
/// so that `actormesh info --watch` can be pointed at it. Every output line goes to `out` or `err`
/// prefixed with "[i] " (i the process id), unless --ranks-filter leaves process i out, and to its
/// log file with --log-dir. SIGINT and SIGTERM are forwarded to the running children (a second one,
/// or the grace period running out, sends SIGKILL). The first process that fails (exits non-zero or
/// is killed by a signal), or one that cannot be started, stops the rest (SIGTERM, then SIGKILL after
/// the grace period); with max_restarts left, the group is then started again (AM_RESTART_COUNT
/// says which attempt). With keep_going a failure stops nothing and is reported when it happens.
/// Ends with at most one line on `err` saying why it stopped.
/// Returns the launcher's exit status: 0 when all succeeded (with keep_going: when at least one
/// did); the failed process's status, or 128 + its signal; 127 (not found) or 126 when the program
/// cannot be run, 1 when a process cannot be started for another reason; 128 + the signal received;
/// 124 on timeout. Throws am::error (nothing started) when the coordinator port cannot be had.
int run_launch(const launch_options& options, std::ostream& out, std::ostream& err);

} // namespace am::tools
