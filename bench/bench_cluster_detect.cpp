// Failure detection benchmark: how long after a process is killed (SIGKILL) or
// stopped (SIGSTOP) the survivors learn of it, as am::process_failure_error failing a barrier they
// wait at. A killed process is seen through its closed connection (a CAF down message on the
// coordinator, then a message to every survivor); a stopped one keeps its connection open and is
// only caught when its heartbeats stop for AM_HEARTBEAT_TIMEOUT (inherited from this program's
// environment; the defaults otherwise).
//
// The program launches its own clusters rather than running under `actormesh launch`, because the
// launcher stops every process as soon as one dies, which would race with what is measured, and
// never sees a stopped one. Each run starts --processes members (3 by default) on a free loopback
// port; process 0 publishes a firing time (steady_clock, which is CLOCK_MONOTONIC and so the same
// clock in every process on one machine) through the cluster store; after a barrier the victim
// (the last process, never the coordinator) sleeps until that time and raises the signal, while
// the survivors wait at a second barrier and print how long after the firing time it failed. A
// run's figure is its slowest survivor's; the program prints the median and range over --runs
// runs. Afterwards it kills the victim and gives the survivors --exit-grace seconds to stop their
// runtimes by themselves (reported), then kills what is left: nothing outlives a run.
//
//   AM_HEARTBEAT_INTERVAL=200ms AM_HEARTBEAT_TIMEOUT=2s ./build/bench/bench_cluster_detect --signal 19 [--runs K] [--processes N] [--run-timeout S]
#include <actormesh.hpp>

#include "bench_flags.hpp"
#include "tools/worker_processes.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count();
}

/// One member of a cluster run: joins, meets the others, then plays the victim or a survivor.
int member(int sig) {
  am::runtime rt;
  int me = am::process_index();
  int victim = am::process_count() - 1;
  if (me == 0)
    am::distributed::key_value_set("fire at", std::to_string(now_ns() + 500'000'000LL));
  am::distributed::wait_at_barrier("before", 30s);
  long long fire_at = std::stoll(am::distributed::blocking_key_value_get("fire at", 10s));
  if (me == victim) {
    std::this_thread::sleep_until(clock_type::time_point(std::chrono::nanoseconds(fire_at)));
    std::raise(sig);
    std::this_thread::sleep_for(600s); // stopped: the launching process kills it after the run
    return 0;
  }
  try {
    am::distributed::wait_at_barrier("after", 600s);
    std::printf("barrier passed (unexpected)\n");
  } catch (const am::process_failure_error& e) {
    double ms = static_cast<double>(now_ns() - fire_at) / 1e6;
    std::printf("detected_ms %.2f process %d: %s\n", ms, e.process(), e.what());
  } catch (const std::exception& e) {
    std::printf("other error after %.2f ms: %s\n", static_cast<double>(now_ns() - fire_at) / 1e6, e.what());
  }
  std::fflush(stdout);
  return 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct started {
  pid_t pid = -1;
  std::string output;
  bool done = false;
};

/// Reaps `m` if it has ended; returns whether it has.
bool reap(started& m) {
  if (!m.done && ::waitpid(m.pid, nullptr, WNOHANG) == m.pid)
    m.done = true;
  return m.done;
}

/// One cluster run; returns the slowest survivor's detection time in ms, or a negative number
/// when some survivor saw no failure in time.
double one_run(int run_index, int processes, int sig, std::chrono::seconds run_timeout, std::chrono::seconds grace) {
  int port = am::tools::free_loopback_port();
  std::vector<started> members(static_cast<std::size_t>(processes));
  for (int p = 0; p < processes; ++p) {
    auto& m = members[static_cast<std::size_t>(p)];
    m.output = "/tmp/am_bench_detect_" + std::to_string(::getpid()) + "_" + std::to_string(p);
    int fd = ::open(m.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    m.pid = ::fork();
    if (m.pid == 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::setenv("AM_COORDINATOR", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
      ::setenv("AM_NUM_PROCESSES", std::to_string(processes).c_str(), 1);
      ::setenv("AM_PROCESS_ID", std::to_string(p).c_str(), 1);
      ::setenv("AM_CPU_DEVICES", "1", 1);
      std::string s = std::to_string(sig);
      ::execl("/proc/self/exe", "bench_cluster_detect", "--member", "--signal", s.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fd);
  }
  auto deadline = clock_type::now() + run_timeout;
  std::vector<double> seen(static_cast<std::size_t>(processes - 1), -1);
  bool gave_up = false;
  while (!gave_up && clock_type::now() < deadline) {
    bool all = true;
    for (int p = 0; p + 1 < processes; ++p) {
      auto& ms = seen[static_cast<std::size_t>(p)];
      if (ms >= 0)
        continue;
      auto text = slurp(members[static_cast<std::size_t>(p)].output);
      auto at = text.find("detected_ms ");
      if (at != std::string::npos && text.find('\n', at) != std::string::npos)
        ms = std::atof(text.c_str() + at + 12);
      else
        all = false;
      if (ms < 0 && reap(members[static_cast<std::size_t>(p)]))
        gave_up = true; // a survivor ended without detecting: the run failed
    }
    if (all)
      break;
    std::this_thread::sleep_for(5ms);
  }
  // The victim is dead or stopped: kill it; the survivors stop their runtimes by themselves.
  auto& victim = members.back();
  ::kill(victim.pid, SIGKILL);
  ::waitpid(victim.pid, nullptr, 0);
  victim.done = true;
  auto exit_deadline = clock_type::now() + grace;
  int stuck = 0;
  for (auto& m : members) {
    while (!reap(m) && clock_type::now() < exit_deadline)
      std::this_thread::sleep_for(10ms);
    if (!m.done) {
      ++stuck;
      ::kill(m.pid, SIGKILL);
      ::waitpid(m.pid, nullptr, 0);
    }
  }
  double worst = 0;
  std::string line = "run " + std::to_string(run_index) + ": survivors saw the failure after";
  for (double ms : seen) {
    worst = ms < 0 || worst < 0 ? -1 : std::max(worst, ms);
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.1f ms", ms);
    line += ms < 0 ? std::string(" (never)") : std::string(buf);
  }
  line += stuck ? ", " + std::to_string(stuck) + " survivor(s) did not exit within the grace period"
                : ", every survivor exited by itself";
  std::printf("%s\n", line.c_str());
  if (worst < 0)
    for (auto& m : members)
      std::printf("---- output of pid %d:\n%s", m.pid, slurp(m.output).c_str());
  for (auto& m : members)
    ::unlink(m.output.c_str());
  std::fflush(stdout);
  return worst;
}

int launcher(am::bench::flags& flag, int sig) {
  int runs = static_cast<int>(std::max<long long>(1, flag.integer("--runs", 5, "measured runs")));
  int processes = static_cast<int>(std::max<long long>(2, flag.integer("--processes", 3, "processes in the cluster")));
  std::chrono::seconds run_timeout(flag.integer("--run-timeout", 60, "seconds one run may take"));
  std::chrono::seconds grace(flag.integer("--exit-grace", 20, "seconds the survivors get to exit"));
  flag.finish();
  const char* interval = std::getenv("AM_HEARTBEAT_INTERVAL");
  const char* timeout = std::getenv("AM_HEARTBEAT_TIMEOUT");
  std::printf("detection of a %s process, %d processes, heartbeat interval %s, timeout %s\n",
              sig == SIGKILL ? "killed (SIGKILL)" : sig == SIGSTOP ? "stopped (SIGSTOP)" : "signalled", processes,
              interval ? interval : "default", timeout ? timeout : "default");
  std::fflush(stdout);
  std::vector<double> figures;
  int failed = 0;
  for (int r = 0; r < runs; ++r) {
    double ms = one_run(r, processes, sig, run_timeout, grace);
    if (ms < 0)
      ++failed;
    else
      figures.push_back(ms);
  }
  if (figures.empty()) {
    std::printf("no run detected the failure\n");
    return 1;
  }
  std::sort(figures.begin(), figures.end());
  double med = figures[figures.size() / 2];
  std::printf("detection: median %.1f ms over %zu runs (range %.1f-%.1f)%s\n", med, figures.size(), figures.front(),
              figures.back(), failed ? ", some runs saw no failure" : "");
  std::printf("RESULT detect_ms %.2f\nRESULT detect_min_ms %.2f\nRESULT detect_max_ms %.2f\n", med, figures.front(),
              figures.back());
  std::fflush(stdout);
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    am::bench::flags flag(argc, argv, "how long after a process is killed or stopped the survivors learn of it");
    const bool is_member = flag.present("--member", "run as one member of a run (the launcher starts these)");
    const int sig = static_cast<int>(flag.integer("--signal", SIGKILL, "signal the victim gets (9 SIGKILL, 19 SIGSTOP)"));
    if (is_member) {
      flag.finish();
      return member(sig);
    }
    return launcher(flag, sig);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster_detect: %s\n", e.what());
    return 2;
  }
}
