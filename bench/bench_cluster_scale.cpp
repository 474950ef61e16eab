// Cluster scale benchmark (issue 24, item 3): what one mesh supervisor costs as the cluster grows
// past what one machine can run as real processes. A real coordinator process (the supervisor, its
// guarded listener and its own cluster client, as process 0 of every cluster runs them) serves
// --members processes; all but process 0 are light members: real cluster clients (the actors every
// process runs, with their joins, heartbeats and failure notices over the real wire protocol), many
// to a host process, --hosts such processes, each connected to the coordinator once through the
// guard. A light member has no devices' actors and no runtime, so a few processes stand for
// thousands.
//
// Per cluster size it measures, in the coordinator process:
//   - join: from the coordinator's start until the directory (every member joined);
//   - heartbeat CPU: the coordinator's CPU time (user + system) per second of wall time over
//     --steady seconds of heartbeats with nothing else going on;
//   - detection: one host process is killed (SIGKILL) at a time the coordinator chose; the time
//     until the coordinator's client hears the first and the last of its members failed (through
//     the closed connection: CAF's down messages, then the supervisor's notices).
// Every figure is printed as a line "scale: members=N ..."; --members takes a list (64,256,1024).
//
//   ./build/bench/bench_cluster_scale --members 64,256,1024 [--hosts 8] [--steady 5] [--heartbeat-ms 1000]
#include "bench_flags.hpp"
#include "tools/worker_processes.hpp"

#include "cluster/cluster_client.hpp"
#include "cluster/guard/guarded_connect.hpp"
#include "cluster/join.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;
using am::detail::join_settings;

/// How the clusters of one run are set up.
struct scale_settings {
  int members = 64;
  int hosts = 8;
  int steady_seconds = 5;
  std::chrono::milliseconds heartbeat_interval{1000};
  std::uint16_t port = 0;
};

/// The settings every member of the cluster shares (process index set by the caller).
join_settings cluster_settings(const scale_settings& s) {
  join_settings j;
  j.networked = true;
  j.process_count = s.members;
  j.coordinator_host = "127.0.0.1";
  j.coordinator_port = s.port;
  j.listen_address = "127.0.0.1";
  j.max_connections = s.hosts * 4 + 16;
  j.join_timeout = 120s;
  j.heartbeat_interval = s.heartbeat_interval;
  j.heartbeat_timeout = 20s;
  j.local_devices = {am::device{0, 0, am::platform::cpu, 0}};
  return j;
}

/// An actor system as a runtime's by default (CAF's sharing scheduler: workers that wait block
/// instead of polling) with the modules a networked cluster member loads.
std::unique_ptr<caf::actor_system> networked_system(caf::actor_system_config& cfg, const join_settings& j) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("logger.verbosity", caf::atom("quiet"));
  am::detail::configure_cluster_modules(cfg, j, "", "", "");
  return std::make_unique<caf::actor_system>(cfg);
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
         + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// Host process `host` (1-based): joins the light members p with (p - 1) % hosts == host - 1, then
/// keeps them (heartbeats run on the clients' actors) until it is killed or its parent goes.
[[noreturn]] void run_host(const scale_settings& s, int host) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto j = cluster_settings(s);
  caf::actor_system_config cfg;
  auto system = networked_system(cfg, j);
  am::detail::guard::connect_settings cs;
  cs.host = j.coordinator_host;
  cs.port = j.coordinator_port;
  auto found = am::detail::guard::guarded_connect_until(*system, cs, clock_type::now() + j.join_timeout);
  if (!found.found) {
    std::fprintf(stderr, "host %d: cannot reach the coordinator: %s\n", host, found.error.c_str());
    std::_Exit(3);
  }
  std::vector<std::unique_ptr<am::detail::cluster_client>> clients;
  for (int p = host; p < s.members; p += s.hosts) {
    am::detail::join_request req;
    req.version = am::detail::announced_version();
    req.process = p;
    req.process_count = s.members;
    req.host = "light-host-" + std::to_string(host);
    req.devices = j.local_devices;
    am::detail::client_config cc;
    cc.coordinator = "127.0.0.1:" + std::to_string(s.port);
    cc.heartbeat_interval = j.heartbeat_interval;
    cc.heartbeat_timeout = j.heartbeat_timeout;
    clients.push_back(std::make_unique<am::detail::cluster_client>(*system, found.found, std::move(req), cc));
  }
  try {
    for (auto& c : clients)
      c->wait_joined(j.join_timeout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "host %d: %s\n", host, e.what());
    std::_Exit(4);
  }
  for (;;) // the driver kills this process; heartbeats go on meanwhile
    std::this_thread::sleep_for(1h);
}

/// The coordinator: the real supervisor and process 0's client. Prints its figures on stdout; kills
/// host process `victim_pid` itself at the moment it measures from.
int run_coordinator(const scale_settings& s, pid_t victim_pid, int victim_host) {
  auto j = cluster_settings(s);
  caf::actor_system_config cfg;
  auto system = networked_system(cfg, j);
  const auto start = clock_type::now();
  auto membership = am::detail::join_cluster(*system, j);
  const auto joined = clock_type::now();

  // Failure notices of the victim's members, as process 0's client hears them.
  std::mutex mutex;
  std::condition_variable heard;
  std::vector<clock_type::time_point> notices;
  membership.client->on_process_failure([&](int p, const std::string&) {
    if ((p - 1) % s.hosts != victim_host - 1)
      return;
    std::lock_guard<std::mutex> guard(mutex);
    notices.push_back(clock_type::now());
    heard.notify_all();
  });

  const double cpu_before = cpu_seconds();
  const auto steady_start = clock_type::now();
  std::this_thread::sleep_for(std::chrono::seconds(s.steady_seconds));
  const double cpu_per_second = (cpu_seconds() - cpu_before) / (ms_between(steady_start, clock_type::now()) / 1000.0);

  const std::size_t victims = static_cast<std::size_t>((s.members - victim_host + s.hosts - 1) / s.hosts);
  const auto fired = clock_type::now();
  ::kill(victim_pid, SIGKILL);
  bool all = false;
  {
    std::unique_lock<std::mutex> guard(mutex);
    all = heard.wait_for(guard, 30s, [&] { return notices.size() >= victims; });
  }
  std::lock_guard<std::mutex> guard(mutex);
  std::printf("scale: members=%d hosts=%d heartbeat_ms=%lld join_ms=%.0f coordinator_cpu_per_s=%.4f "
              "detect_first_ms=%.1f detect_last_ms=%.1f detected=%zu/%zu%s\n",
              s.members, s.hosts, static_cast<long long>(s.heartbeat_interval.count()), ms_between(start, joined),
              cpu_per_second, notices.empty() ? -1.0 : ms_between(fired, notices.front()),
              notices.empty() ? -1.0 : ms_between(fired, notices.back()), notices.size(), victims,
              all ? "" : " (not every notice came within 30 s)");
  std::fflush(stdout);
  std::_Exit(all ? 0 : 1); // the survivors are killed by the driver; no orderly leave measured here
}

/// One cluster of `s.members`: forks the hosts and the coordinator, waits for the coordinator's
/// line, then kills what is left. True when the coordinator measured everything.
bool run_cluster(scale_settings s) {
  s.port = static_cast<std::uint16_t>(am::tools::free_loopback_port());
  std::vector<pid_t> hosts;
  for (int h = 1; h <= s.hosts; ++h) {
    pid_t pid = ::fork();
    if (pid == 0)
      run_host(s, h);
    hosts.push_back(pid);
  }
  const int victim_host = s.hosts; // never process 0's
  pid_t coordinator = ::fork();
  if (coordinator == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::_Exit(run_coordinator(s, hosts.back(), victim_host));
  }
  // Bounded: the coordinator's joins (120 s), steady phase and detection (30 s) end by themselves.
  int status = 0;
  const auto limit = clock_type::now() + 240s + std::chrono::seconds(s.steady_seconds);
  pid_t done = 0;
  while ((done = ::waitpid(coordinator, &status, WNOHANG)) == 0 && clock_type::now() < limit)
    std::this_thread::sleep_for(50ms);
  if (done == 0) {
    std::fprintf(stderr, "bench_cluster_scale: the coordinator of %d members did not finish in time\n", s.members);
    ::kill(coordinator, SIGKILL);
    ::waitpid(coordinator, &status, 0);
  }
  for (pid_t h : hosts) {
    ::kill(h, SIGKILL);
    ::waitpid(h, nullptr, 0);
  }
  return done != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(std::stoi(item));
  return out;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    am::bench::flags flag(argc, argv, "what one mesh supervisor costs (join, heartbeat CPU, detection) as members grow");
    scale_settings s;
    const auto sizes = parse_list(flag.text("--members", "64,256,1024", "cluster sizes to measure, comma-separated"));
    s.hosts = static_cast<int>(flag.integer("--hosts", 8, "processes that hold the light members"));
    s.steady_seconds = static_cast<int>(flag.integer("--steady", 5, "seconds of heartbeats the CPU is measured over"));
    s.heartbeat_interval = std::chrono::milliseconds(flag.integer("--heartbeat-ms", 1000, "each member's heartbeat interval"));
    flag.finish();
    if (s.hosts < 1 || s.hosts > 64 || s.steady_seconds < 1 || s.steady_seconds > 600 || s.heartbeat_interval <= 0ms)
      throw std::invalid_argument("--hosts (1-64), --steady (1-600) and --heartbeat-ms must be positive and bounded");
    bool ok = true;
    for (int members : sizes) {
      if (members <= s.hosts || members > 100000)
        throw std::invalid_argument("--members " + std::to_string(members) + " must be above --hosts and at most 100000");
      s.members = members;
      ok = run_cluster(s) && ok;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cluster_scale: %s\n", e.what());
    return 2;
  }
}
