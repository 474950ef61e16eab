// `actormesh launch`: the supervision loop. One thread polls every child's stdout and stderr pipe and
// the signal pipe; a child is reaped on SIGCHLD (and at least once a second), and its pipes are then
// drained and closed, so that a grandchild still holding them cannot keep the launcher waiting.
#include "tools/launch_supervisor.hpp"

#include "tools/launch_environment.hpp"
#include "tools/launch_lines.hpp"
#include "tools/launch_logs.hpp"
#include "tools/launch_signals.hpp"
#include "tools/launch_spawn.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ostream>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tuple>
#include <utility>
#include <unistd.h>

namespace am::tools {

namespace {

using clock_type = std::chrono::steady_clock;

// The longest poll() wait: a lost wake-up can delay reaping by at most this.
constexpr std::chrono::milliseconds max_wait{1000};

// The most process indices a message lists before "and N more".
constexpr std::size_t max_listed = 16;

clock_type::duration seconds(double s) {
  return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
}

std::string signal_name(int sig) {
  const char* text = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, text ? text : "unknown");
}

// "0", "0 and 2", "0, 1 and 2", "0, 1, ... 15 and 1008 more".
std::string index_list(const std::vector<int>& indices) {
  std::string text;
  const auto listed = std::min(indices.size(), max_listed);
  for (std::size_t i = 0; i < listed; ++i) {
    if (i > 0)
      text += (i + 1 == indices.size()) ? " and " : ", ";
    text += std::to_string(indices[i]);
  }
  if (indices.size() > listed)
    text += fmt::format(" and {} more", indices.size() - listed);
  return text;
}

// Sends `sig` to the child's process group (itself and what it started); to the child alone when it
// has left its group.
void signal_child(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0)
    ::kill(pid, sig);
}

// With N children the launcher holds 2N pipe ends (and briefly 4 more): raise the soft limit on open
// files towards the hard one when the default (often 1024) is too small.
void ensure_file_limit(int num_processes) {
  const auto needed = static_cast<rlim_t>(2 * num_processes + 64);
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed)
    return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? needed : std::min(needed, limit.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

struct child {
  child(int i, launched_child p, std::ostream* out, std::ostream* err, process_logs logs_)
      : index(i), proc(p), logs(std::move(logs_)), out_lines(i, out, logs.out.get()),
        err_lines(i, err, logs.err.get()) {}
  int index; // the process id
  launched_child proc;
  process_logs logs; // --log-dir's files, or none
  line_prefixer out_lines;
  line_prefixer err_lines;
  bool running = true;
};

// Why the launch is stopping (the first cause wins; later ones are consequences of stopping).
enum class stop_cause { none, failure, start_failure, signal, timeout };

// A process that failed while --keep-going let the others run.
struct tolerated_failure {
  int process;
  int status; // as waitpid gives it
};

class supervisor {
public:
  supervisor(const launch_options& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int run() {
    const auto token = launch_cluster_token(); // one secret for the whole cluster, every attempt
    ensure_file_limit(options_.num_processes);
    if (options_.timeout_seconds) // the whole launch, starting and restarts included
      timeout_at_ = clock_type::now() + seconds(*options_.timeout_seconds);
    signal_events signals;
    for (;; ++attempt_) {
      start_all(token);
      handle_signals(signals.take()); // one caught while starting, even before any child started
      supervise(signals);
      if (cause_ != stop_cause::failure || attempt_ >= options_.max_restarts)
        break;
      fmt::print(err_, "actormesh launch: {}; restarting the group (restart {} of {})\n", why_stopped().second,
                 attempt_ + 1, options_.max_restarts);
      begin_next_attempt();
    }
    return finish();
  }

private:
  // The coordinator of this attempt: the fixed one, or a free port on 127.0.0.1 picked now.
  std::string coordinator_address() const {
    const auto host = options_.coordinator_host.value_or("127.0.0.1");
    // Node 0 hosts the coordinator: a fixed port is checked for being free there (on loopback).
    const int port = options_.node_rank == 0 ? coordinator_port(options_.coordinator_port) : *options_.coordinator_port;
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }

  void start_all(const std::string& token) {
    cluster_variables cluster{coordinator_address(), options_.world_size(), options_.cpu_devices, token, attempt_};
    const int first = options_.first_process();
    const int last = first + options_.num_processes - 1;
    fmt::print(err_, "actormesh launch: coordinator {}, process{} {} of {}{}\n", cluster.coordinator,
               first == last ? "" : "es", first == last ? std::to_string(first) : fmt::format("{}-{}", first, last),
               options_.world_size(),
               options_.num_nodes > 1 ? fmt::format(" (node {} of {})", options_.node_rank, options_.num_nodes) : "");
    err_.flush();
    std::vector<process_logs> logs(static_cast<std::size_t>(options_.num_processes));
    if (options_.log_dir) // all made before any process starts: a failure here leaves nothing running
      for (int i = 0; i < options_.num_processes; ++i)
        logs[static_cast<std::size_t>(i)] = open_process_logs(*options_.log_dir, attempt_, first + i);
    children_.reserve(static_cast<std::size_t>(options_.num_processes));
    for (int i = 0; i < options_.num_processes; ++i) {
      if (signal_events::first_stop_signal() != 0)
        return; // the loop forwards it to those already started
      const int id = first + i;
      auto started = spawn_child(options_.command, child_environment(cluster, id));
      if (started.error != 0) {
        cause_ = stop_cause::start_failure;
        failed_process_ = id;
        start_error_ = started.error;
        start_step_ = started.step;
        stop_all(SIGTERM);
        return;
      }
      children_.emplace_back(id, started.child, shown(id) ? &out_ : nullptr, shown(id) ? &err_ : nullptr,
                             std::move(logs[static_cast<std::size_t>(i)]));
    }
  }

  // Whether process `id`'s lines go to the console (--ranks-filter).
  bool shown(int id) const {
    const auto& filter = options_.ranks_filter;
    return filter.empty() || std::binary_search(filter.begin(), filter.end(), id);
  }

  // Reads and reaps until every child of this attempt has ended.
  void supervise(signal_events& signals) {
    for (bool reap_now = true;;) {
      if (reap_now)
        reap();
      flush_all();
      if (std::none_of(children_.begin(), children_.end(), [](const child& c) { return c.running; }))
        return;
      reap_now = wait_and_read(signals);
      check_deadlines();
    }
  }

  void flush_all() {
    out_.flush();
    err_.flush();
    for (auto& c : children_)
      for (auto* log : {c.logs.out.get(), c.logs.err.get()})
        if (log)
          log->flush();
  }

  // After a failed attempt whose processes have all ended: forgets it (the timeout still runs).
  void begin_next_attempt() {
    children_.clear();
    cause_ = stop_cause::none;
    failed_process_ = -1;
    failed_status_ = 0;
    stopped_.clear();
    kill_at_.reset();
    killed_ = false;
    killed_on_signal_ = false;
    killed_count_ = 0;
    succeeded_ = 0;
  }

  // Waits for output, a signal or a deadline; reads what is ready. True when children should be
  // reaped (a SIGCHLD came, or the wait timed out).
  bool wait_and_read(signal_events& signals) {
    std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
    std::vector<std::pair<child*, bool>> owners{{nullptr, false}}; // the child, and whether stderr
    for (auto& c : children_) {
      for (bool is_err : {false, true}) {
        const int fd = is_err ? c.proc.err_fd : c.proc.out_fd;
        if (fd >= 0) {
          fds.push_back({fd, POLLIN, 0});
          owners.emplace_back(&c, is_err);
        }
      }
    }
    const int ready = ::poll(fds.data(), fds.size(), wait_ms());
    if (ready < 0)
      return errno != EINTR;
    if (ready == 0)
      return true;
    bool reap_now = false;
    if (fds[0].revents != 0)
      reap_now = handle_signals(signals.take());
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0)
        continue;
      auto& [c, is_err] = owners[i];
      pump(is_err ? c->proc.err_fd : c->proc.out_fd, is_err ? c->err_lines : c->out_lines, false);
    }
    return reap_now;
  }

  int wait_ms() const {
    auto wait = clock_type::duration(max_wait);
    const auto now = clock_type::now();
    for (const auto& deadline : {kill_at_, cause_ == stop_cause::none ? timeout_at_ : std::nullopt})
      if (deadline)
        wait = std::min(wait, std::max(clock_type::duration::zero(), *deadline - now));
    // Round up, so that the deadline has passed when poll() returns.
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count());
  }

  // Forwards SIGINT and SIGTERM (the first) or kills (a later one); true when a SIGCHLD came.
  bool handle_signals(const std::vector<int>& caught) {
    bool child_ended = false;
    for (int sig : caught) {
      if (sig == SIGCHLD) {
        child_ended = true;
      } else if (cause_ == stop_cause::none) {
        cause_ = stop_cause::signal;
        received_signal_ = sig;
        stop_all(sig);
      } else if (!killed_) {
        kill_all(true);
      }
    }
    return child_ended;
  }

  // Reads what one pipe has (once, or until it is empty when `drain`); at end of stream writes the
  // last unfinished line and closes the pipe.
  void pump(int& fd, line_prefixer& lines, bool drain) {
    std::array<char, 65536> buffer;
    while (fd >= 0) {
      const auto got = ::read(fd, buffer.data(), buffer.size());
      if (got > 0) {
        lines.feed(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
        if (!drain)
          return;
      } else if (got < 0 && errno == EINTR) {
        continue;
      } else if (got < 0 && errno == EAGAIN) {
        return;
      } else { // end of stream, or an error that ends it
        lines.finish();
        close_fd(fd);
      }
    }
  }

  void reap() {
    for (auto& c : children_) {
      if (!c.running)
        continue;
      int status = 0;
      const pid_t r = ::waitpid(c.proc.pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno != ECHILD))
        continue;
      c.running = false;
      // Everything the child wrote is in its pipes now; what a grandchild writes later is not waited for.
      for (bool is_err : {false, true}) {
        auto& fd = is_err ? c.proc.err_fd : c.proc.out_fd;
        auto& lines = is_err ? c.err_lines : c.out_lines;
        pump(fd, lines, true);
        lines.finish();
        close_fd(fd);
      }
      const bool failed = r == c.proc.pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (!failed) {
        ++succeeded_;
      } else if (options_.keep_going && cause_ == stop_cause::none) {
        tolerated_.push_back({c.index, status});
        const auto running = std::count_if(children_.begin(), children_.end(), [](const child& o) { return o.running; });
        fmt::print(err_, "actormesh launch: {}; {} (--keep-going)\n", status_text(c.index, status).second,
                   running == 0 ? std::string("no other process is running")
                   : running == 1 ? std::string("the other process goes on")
                                  : fmt::format("the other {} processes go on", running));
      } else if (cause_ == stop_cause::none) {
        cause_ = stop_cause::failure;
        failed_process_ = c.index;
        failed_status_ = status;
        stop_all(SIGTERM);
      }
    }
  }

  void check_deadlines() {
    const auto now = clock_type::now();
    if (cause_ == stop_cause::none && timeout_at_ && now >= *timeout_at_) {
      cause_ = stop_cause::timeout;
      stop_all(SIGTERM);
    }
    if (kill_at_ && now >= *kill_at_)
      kill_all(false);
  }

  // Begins stopping: `sig` to every running child, SIGKILL when the grace period is over.
  void stop_all(int sig) {
    for (auto& c : children_) {
      if (c.running) {
        stopped_.push_back(c.index);
        signal_child(c.proc.pid, sig);
      }
    }
    kill_at_ = clock_type::now() + seconds(options_.grace_seconds);
  }

  void kill_all(bool on_signal) {
    for (auto& c : children_) {
      if (c.running) {
        ++killed_count_;
        signal_child(c.proc.pid, SIGKILL);
      }
    }
    killed_ = true;
    killed_on_signal_ = on_signal;
    kill_at_.reset();
  }

  // The exit status a process's waitpid status gives the launcher, and the words for it.
  static std::pair<int, std::string> status_text(int process, int status) {
    if (WIFEXITED(status))
      return {WEXITSTATUS(status), fmt::format("process {} exited with status {}", process, WEXITSTATUS(status))};
    return {128 + WTERMSIG(status), fmt::format("process {} was killed by {}", process, signal_name(WTERMSIG(status)))};
  }

  // Why this attempt stopped (cause_ is not none): the exit status and the words for it.
  std::pair<int, std::string> why_stopped() const {
    std::string text;
    int status = 1;
    const auto k = stopped_.size();
    const auto n = static_cast<std::size_t>(options_.num_processes);
    switch (cause_) {
      case stop_cause::failure:
        std::tie(status, text) = status_text(failed_process_, failed_status_);
        if (k == 0 && n > 1)
          text += "; no other process was still running";
        else if (k > 0 && k == n - 1)
          text += k == 1 ? "; stopped the other process" : fmt::format("; stopped the other {} processes", k);
        else if (k > 0)
          text += fmt::format("; stopped the {} other process{} still running", k, k == 1 ? "" : "es");
        break;
      case stop_cause::start_failure:
        if (start_step_ == "exec") {
          status = start_error_ == ENOENT || start_error_ == ENOTDIR ? 127 : 126;
          text = fmt::format("cannot run '{}': {}", options_.command.front(), std::strerror(start_error_));
        } else {
          text = fmt::format("cannot start process {}: {} failed: {}", failed_process_, start_step_,
                             std::strerror(start_error_));
        }
        if (k > 0)
          text += fmt::format("; stopped the {} process{} already started", k, k == 1 ? "" : "es");
        break;
      case stop_cause::signal:
        status = 128 + received_signal_;
        text = fmt::format("received {}; ", signal_name(received_signal_));
        text += k == 0 ? std::string("no process was running")
                       : k == 1 ? std::string("forwarded it to the running process")
                                : fmt::format("forwarded it to the {} running processes", k);
        break;
      case stop_cause::timeout:
        status = 124;
        text = fmt::format("timed out after {:g} s with process{} {} still running; stopped {}",
                           *options_.timeout_seconds, k == 1 ? "" : "es", index_list(stopped_),
                           k == 1 ? "it" : "them");
        break;
      case stop_cause::none:
        break;
    }
    if (killed_count_ > 0) {
      const auto when = killed_on_signal_ ? std::string("at a second signal")
                                          : fmt::format("after {:g} s", options_.grace_seconds);
      text += fmt::format(" ({} {} still running {} and got SIGKILL)", killed_count_,
                          killed_count_ == 1 ? "was" : "were", when);
    }
    return {status, text};
  }

  // With --keep-going and failures but no stop: 0 when a process ended well, else the first
  // failure's status; and the words for it.
  std::pair<int, std::string> why_tolerated() const {
    std::vector<int> failed;
    for (const auto& f : tolerated_)
      failed.push_back(f.process);
    const auto ended_well = fmt::format("{} of {} process{} ended well", succeeded_, options_.num_processes,
                                        options_.num_processes == 1 ? "" : "es");
    const auto which = fmt::format("process{} {} failed", failed.size() == 1 ? "" : "es", index_list(failed));
    if (succeeded_ > 0)
      return {0, fmt::format("{}; {} (--keep-going)", ended_well, which)};
    return {status_text(tolerated_.front().process, tolerated_.front().status).first,
            fmt::format("{}: {} (--keep-going)", ended_well, which)};
  }

  // The closing line on `err` and the exit status.
  int finish() {
    if (cause_ == stop_cause::none && tolerated_.empty())
      return 0;
    auto [status, text] = cause_ == stop_cause::none ? why_tolerated() : why_stopped();
    if (cause_ == stop_cause::failure && attempt_ > 0)
      text += fmt::format("; gave up after {} restart{}", attempt_, attempt_ == 1 ? "" : "s");
    fmt::print(err_, "actormesh launch: {}\n", text);
    err_.flush();
    return status;
  }

  const launch_options& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::vector<child> children_;
  stop_cause cause_ = stop_cause::none;
  int failed_process_ = -1;
  int failed_status_ = 0;
  int start_error_ = 0;
  std::string start_step_;
  int received_signal_ = 0;
  std::vector<int> stopped_; // the processes running when stopping began
  std::optional<clock_type::time_point> timeout_at_;
  std::optional<clock_type::time_point> kill_at_;
  bool killed_ = false;
  bool killed_on_signal_ = false;
  std::size_t killed_count_ = 0;
  int attempt_ = 0;                         // 0, then one more each restart
  int succeeded_ = 0;                       // processes that exited 0, this attempt
  std::vector<tolerated_failure> tolerated_; // --keep-going's failures, in order
};

} // namespace

int run_launch(const launch_options& options, std::ostream& out, std::ostream& err) {
  return supervisor(options, out, err).run();
}

} // namespace am::tools
