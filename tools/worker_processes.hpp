/// Worker processes that a command (or a benchmark) starts for itself and then drives as the
/// controller of a single-controller cluster on loopback: `actormesh worker` children with their
/// output on pipes, waited for with a deadline and killed at the latest when the group goes.
#pragma once

#include "tools/launch_spawn.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace am::tools {

/// A free TCP port on 127.0.0.1 for a coordinator started later (cluster/free_port.hpp).
int free_loopback_port();

/// The path of the running executable (/proc/self/exe).
std::string running_executable();

/// Workers 1..processes-1 of a cluster of `processes` processes whose coordinator is
/// 127.0.0.1:port (this process, started as the controller after them: workers retry joining).
class worker_processes {
public:
  /// Starts the workers: `program worker --coordinator 127.0.0.1:PORT --process-id K
  /// --num-processes P --cpu-devices D`, with this process's environment (AM_LOG=error unless set).
  /// Throws am::runtime_error when one cannot be started.
  worker_processes(const std::string& program, int processes, int port, int cpu_devices);
  worker_processes(const worker_processes&) = delete;
  worker_processes& operator=(const worker_processes&) = delete;
  /// Kills (SIGKILL) and reaps the workers still running.
  ~worker_processes();

  /// Waits until every worker has exited or `timeout` has passed, then kills the rest. True when
  /// every worker exited with status 0.
  bool wait(std::chrono::milliseconds timeout);

  /// What the workers printed so far (stdout and stderr), each line prefixed with its index.
  std::string output();

private:
  struct member {
    launched_child child{};
    int index = 0;
    bool done = false;
    int status = -1;
    std::string text{};
  };
  void drain(member& m);
  std::vector<member> members_;
};

} // namespace am::tools
