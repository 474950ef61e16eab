// `actormesh launch`: fork and exec of one child. Between fork and exec the child only makes
// async-signal-safe calls (the caller may have threads: tests run the command line in process), so
// everything it needs is built before the fork.
#include "tools/launch_spawn.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace am::tools {

namespace {

// What the child reports on its status pipe when a step before or at exec fails.
struct child_failure {
  std::int32_t step;
  std::int32_t error;
};

constexpr std::array<const char*, 4> child_steps{"exec", "dup2", "prctl", "sigprocmask"};

// A pipe whose ends are close-on-exec; the read end also non-blocking when asked.
bool make_pipe(std::array<int, 2>& fds, bool nonblocking_read) {
  if (::pipe2(fds.data(), O_CLOEXEC) != 0)
    return false;
  if (nonblocking_read)
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return true;
}

[[noreturn]] void child_fail(int status_fd, int step) {
  const child_failure failure{step, errno};
  [[maybe_unused]] auto written = ::write(status_fd, &failure, sizeof failure);
  ::_exit(127);
}

// The child's side, up to exec; never returns.
[[noreturn]] void run_child(char* const* argv, char* const* envp, pid_t parent, int null_fd, int out_fd, int err_fd,
                            int status_fd) {
  ::setpgid(0, 0);
  // The launcher's handlers are reset by exec, but a signal ignored or blocked in the caller would
  // stay ignored or blocked in the child, and the launcher relies on SIGINT and SIGTERM reaching it.
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE})
    ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0)
    child_fail(status_fd, 3);
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
    child_fail(status_fd, 2);
  if (::getppid() != parent) // the launcher died before the death signal was armed
    ::_exit(128 + SIGTERM);
  if (::dup2(null_fd, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0)
    child_fail(status_fd, 1);
  ::execvpe(argv[0], argv, envp);
  child_fail(status_fd, 0);
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  result.reserve(strings.size() + 1);
  for (const auto& s : strings)
    result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

} // namespace

void close_fd(int& fd) noexcept {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

spawn_result spawn_child(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  spawn_result result;
  auto fail = [&](const char* step) {
    result.error = errno;
    result.step = step;
    return result;
  };
  const auto args = pointers(argv);
  const auto envp = pointers(environment);
  std::array<int, 2> out{-1, -1}, err{-1, -1}, status{-1, -1};
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0)
    return fail("open");
  auto close_all = [&] {
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &status[0], &status[1], &null_fd})
      close_fd(*fd);
  };
  if (!make_pipe(out, true) || !make_pipe(err, true) || !make_pipe(status, false)) {
    fail("pipe");
    close_all();
    return result;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    fail("fork");
    close_all();
    return result;
  }
  if (pid == 0)
    run_child(args.data(), envp.data(), parent, null_fd, out[1], err[1], status[1]);
  ::setpgid(pid, pid); // also here, so that the group exists before any signal is sent to it
  close_fd(out[1]);
  close_fd(err[1]);
  close_fd(status[1]);
  close_fd(null_fd);
  // The status pipe closes at exec (success) or carries the failed step (the child then exits).
  child_failure failure{};
  ssize_t got;
  do
    got = ::read(status[0], &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  close_fd(status[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int ignored;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    close_all();
    result.error = failure.error;
    const auto step = static_cast<std::size_t>(failure.step);
    result.step = step < child_steps.size() ? child_steps[step] : "exec";
    return result;
  }
  result.child = launched_child{pid, out[0], err[0]};
  return result;
}

} // namespace am::tools
