// Starting a group of real processes for cluster tests: each with its own environment and its
// output in its own file, waited for with a deadline, killed when the test is done.
#pragma once

#include "cluster/free_port.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace am::testing {

/// A free TCP port on 127.0.0.1, outside the kernel's ephemeral range (cluster/free_port.hpp):
/// bound once, then released, so that a coordinator started later can bind it.
inline int free_loopback_port() { return am::detail::free_loopback_port(); }

/// One started process: its pid, where its output goes, and how it ended.
struct member_process {
  pid_t pid = -1;
  std::string output_path;
  bool done = false;
  int status = -1;      ///< exit status when it exited
  int signal = 0;       ///< the signal that killed it, when one did

  /// What it printed (stdout and stderr).
  std::string output() const {
    std::ifstream in(output_path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

/// A group of processes started together and killed (SIGKILL) at the latest when the group is
/// destroyed, so that no test leaves processes behind.
class process_group {
public:
  process_group() = default;
  process_group(const process_group&) = delete;
  process_group& operator=(const process_group&) = delete;
  ~process_group() {
    for (auto& m : members_)
      if (!m.done) {
        ::kill(m.pid, SIGKILL);
        ::waitpid(m.pid, nullptr, 0);
      }
    for (auto& m : members_)
      ::unlink(m.output_path.c_str());
  }

  /// Starts `argv` with `env` added to this process's environment; returns its index.
  std::size_t start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    member_process m;
    char tmpl[] = "/tmp/am_cluster_test_XXXXXX";
    int fd = ::mkstemp(tmpl);
    m.output_path = tmpl;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      for (auto& [k, v] : env)
        ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> args;
      for (auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fd);
    m.pid = pid;
    members_.push_back(m);
    return members_.size() - 1;
  }

  member_process& operator[](std::size_t k) { return members_[k]; }
  std::size_t size() const { return members_.size(); }

  /// Waits until every process in `which` (all when empty) has ended or `timeout` passed; returns
  /// whether they all ended.
  bool wait(std::chrono::milliseconds timeout, std::vector<std::size_t> which = {}) {
    if (which.empty())
      for (std::size_t k = 0; k < members_.size(); ++k)
        which.push_back(k);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      bool all = true;
      for (auto k : which) {
        auto& m = members_[k];
        if (m.done)
          continue;
        int raw = 0;
        if (::waitpid(m.pid, &raw, WNOHANG) == m.pid) {
          m.done = true;
          if (WIFEXITED(raw))
            m.status = WEXITSTATUS(raw);
          if (WIFSIGNALED(raw))
            m.signal = WTERMSIG(raw);
        } else {
          all = false;
        }
      }
      if (all)
        return true;
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  /// Everything every member printed, each block headed by its index (for failure messages).
  std::string all_output() const {
    std::string out;
    for (std::size_t k = 0; k < members_.size(); ++k)
      out += "---- process " + std::to_string(k) + " (status " + std::to_string(members_[k].status) + ", signal "
             + std::to_string(members_[k].signal) + ")\n" + members_[k].output();
    return out;
  }

private:
  std::vector<member_process> members_;
};

/// The environment that makes process `id` of `count` join the coordinator on `port`, with
/// `devices` CPU devices and heartbeats suited to tests.
inline std::map<std::string, std::string> cluster_env(int id, int count, int port, int devices = 2) {
  return {{"AM_COORDINATOR", "127.0.0.1:" + std::to_string(port)},
          {"AM_NUM_PROCESSES", std::to_string(count)},
          {"AM_PROCESS_ID", std::to_string(id)},
          {"AM_CPU_DEVICES", std::to_string(devices)},
          {"AM_JOIN_TIMEOUT", "20s"},
          {"AM_LOG", "error"}};
}

} // namespace am::testing
