/// `actormesh launch`: starting one child process with its output on pipes.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace am::tools {

/// A started child: its pid (also its process group) and the read ends of its stdout and stderr
/// pipes, non-blocking and close-on-exec.
struct launched_child {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
};

/// The outcome of spawn_child: the child, or the errno of the step that failed and its name.
struct spawn_result {
  /// The child; pid -1 when it could not be started (a child whose exec failed is already reaped).
  launched_child child;
  /// 0, or the errno of the failed step.
  int error = 0;
  /// The failed step: "exec" when the program itself could not be run, else the system call
  /// ("pipe", "fork", "dup2", "prctl", "open").
  std::string step;
};

/// Closes `fd` when it is open and sets it to -1.
void close_fd(int& fd) noexcept;

/// Starts `argv` (searched in PATH like a shell when it has no '/') with exactly `environment`
/// ("NAME=value" entries), stdin from /dev/null and stdout and stderr on fresh pipes. The child runs
/// in a process group of its own (so that a terminal's Ctrl-C reaches it once, through the launcher,
/// and signals reach what it starts) and gets SIGTERM when the thread that started it dies
/// (PR_SET_PDEATHSIG, checked against a parent that died before it was set). Returns once the child
/// has exec'd or failed to: an exec failure is reported here, not as an exit status.
spawn_result spawn_child(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

} // namespace am::tools
