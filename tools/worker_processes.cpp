#include "tools/worker_processes.hpp"

#include "cluster/free_port.hpp"

#include "actormesh/actors/errors.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace am::tools {

int free_loopback_port() { return am::detail::free_loopback_port(); }

std::string running_executable() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

worker_processes::worker_processes(const std::string& program, int processes, int port, int cpu_devices) {
  std::vector<std::string> env;
  bool has_log = false;
  for (char** e = environ; e && *e; ++e) {
    env.emplace_back(*e);
    has_log = has_log || env.back().rfind("AM_LOG=", 0) == 0;
  }
  if (!has_log)
    env.emplace_back("AM_LOG=error");
  for (int k = 1; k < processes; ++k) {
    auto started = spawn_child({program, "worker", "--coordinator", "127.0.0.1:" + std::to_string(port),
                                "--process-id", std::to_string(k), "--num-processes", std::to_string(processes),
                                "--cpu-devices", std::to_string(cpu_devices)},
                               env);
    if (started.child.pid < 0)
      throw runtime_error("cannot start worker " + std::to_string(k) + " (" + program + "): " + started.step
                          + ": " + std::strerror(started.error));
    members_.push_back(member{started.child, k});
  }
}

worker_processes::~worker_processes() {
  for (auto& m : members_) {
    if (!m.done) {
      ::kill(m.child.pid, SIGKILL);
      ::waitpid(m.child.pid, nullptr, 0);
    }
    close_fd(m.child.out_fd);
    close_fd(m.child.err_fd);
  }
}

void worker_processes::drain(member& m) {
  std::array<char, 4096> chunk{};
  for (int* fd : {&m.child.out_fd, &m.child.err_fd}) {
    while (*fd >= 0) {
      auto n = ::read(*fd, chunk.data(), chunk.size());
      if (n > 0) {
        m.text.append(chunk.data(), static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0)
        close_fd(*fd); // the worker closed it (exited)
      break;           // EAGAIN: nothing more for now
    }
  }
}

bool worker_processes::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all_done = true;
    for (auto& m : members_) {
      drain(m);
      if (m.done)
        continue;
      int status = 0;
      if (::waitpid(m.child.pid, &status, WNOHANG) == m.child.pid) {
        m.done = true;
        m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else {
        all_done = false;
      }
    }
    if (all_done || std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  bool ok = true;
  for (auto& m : members_) {
    if (!m.done) {
      ::kill(m.child.pid, SIGKILL);
      ::waitpid(m.child.pid, nullptr, 0);
      m.done = true;
      m.status = 128 + SIGKILL;
      m.text += "(killed: still running after the controller stopped)\n";
    }
    drain(m);
    if (m.status != 0 && m.status != 128 + SIGKILL)
      m.text += "(exited with status " + std::to_string(m.status) + ")\n";
    ok = ok && m.status == 0;
  }
  return ok;
}

std::string worker_processes::output() {
  std::string out;
  for (auto& m : members_) {
    drain(m);
    std::size_t start = 0;
    while (start < m.text.size()) {
      auto end = m.text.find('\n', start);
      if (end == std::string::npos)
        end = m.text.size();
      out += "[worker " + std::to_string(m.index) + "] " + m.text.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  return out;
}

} // namespace am::tools
