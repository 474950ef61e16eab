// The raw CAF peers of the control-path benchmarks. Every actor system here is configured as the
// actormesh runtime configures its own in a cluster (the `sharing` scheduler, middleman.workers=0,
// no automatic connections; its round trip is in doc/performance.md, "Cluster"), so the gap to the
// actormesh figure is what actormesh adds on top of bare CAF.
//
//   caf_peer [rtt] [--warmup W] [--rounds R]
//       Two processes: one publishes an echo actor through CAF's middleman on 127.0.0.1, the other
//       connects with remote_actor and does request/receive round trips from one scoped_actor:
//       the peer of bench_cluster_store's round trip (the anchor of the remote call target).
//   caf_peer barrier --processes N [--warmup W] [--rounds R]
//       N processes: process 0 publishes a barrier actor that answers every waiting request once
//       all N have arrived (the mesh supervisor's scheme, one central actor), and every process
//       does request/receive barriers from a scoped_actor in a loop; process 0 times them. Not a
//       target's anchor but a decomposition: how much of bench_cluster_barrier's time a
//       centralized barrier over bare CAF already costs, against MPI_Barrier's peer-to-peer one.
//
// The program forks before any actor system exists: the parent serves (and, for the barrier, takes
// part as process 0), children connect to the port it sends them through a pipe. Every process
// prints nothing but the measuring one, ends after its loop, and an alarm bounds each.
#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using am::bench::percentile;

using clock_type = std::chrono::steady_clock;
using barrier_atom = caf::atom_constant<caf::atom("barrier")>;

/// The configuration the actormesh runtime uses in a cluster (devices/detail/runtime_impl.cpp,
/// cluster/join.cpp).
struct peer_config : caf::actor_system_config {
  peer_config() {
    load<caf::io::middleman>();
    set("scheduler.policy", caf::atom("sharing"));
    set("middleman.workers", static_cast<size_t>(0));
    set("middleman.enable-automatic-connections", false);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

int serve(int port_pipe, int quit_pipe) {
  peer_config cfg;
  caf::actor_system sys{cfg};
  auto echo = sys.spawn([]() -> caf::behavior { return {[](std::int64_t v) { return v + 1; }}; });
  auto port = sys.middleman().publish(echo, 0, "127.0.0.1");
  std::uint16_t p = port ? *port : 0;
  if (::write(port_pipe, &p, sizeof p) != sizeof p || p == 0)
    return 2;
  char c;
  while (::read(quit_pipe, &c, 1) > 0) {
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return 0;
}

int measure(std::uint16_t port, long long warmup, long long rounds) {
  peer_config cfg;
  caf::actor_system sys{cfg};
  auto remote = sys.middleman().remote_actor("127.0.0.1", port);
  if (!remote) {
    std::fprintf(stderr, "caf_peer: remote_actor: %s\n", sys.render(remote.error()).c_str());
    return 2;
  }
  caf::scoped_actor self{sys};
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  bool ok = true;
  for (long long k = 0; k < warmup + rounds && ok; ++k) {
    auto start = clock_type::now();
    self->request(*remote, std::chrono::seconds(10), static_cast<std::int64_t>(k))
      .receive([&](std::int64_t v) { ok = v == k + 1; }, [&](caf::error&) { ok = false; });
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  if (!ok || us.empty()) {
    std::fprintf(stderr, "caf_peer: a round trip failed\n");
    return 2;
  }
  std::printf("raw CAF remote request/receive, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n", rounds,
              percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
  std::printf("RESULT caf_rtt_us %.2f\nRESULT caf_rtt_p10_us %.2f\nRESULT caf_rtt_p90_us %.2f\n", percentile(us, 0.5),
              percentile(us, 0.1), percentile(us, 0.9));
  std::fflush(stdout);
  return 0;
}

/// The central barrier: answers every waiting request once `n` have arrived.
struct barrier_state {
  std::vector<caf::response_promise> waiting;
};

caf::behavior barrier_actor(caf::stateful_actor<barrier_state>* self, int n) {
  return {[=](barrier_atom) {
    self->state.waiting.push_back(self->make_response_promise());
    if (static_cast<int>(self->state.waiting.size()) == n) {
      for (auto& rp : self->state.waiting)
        rp.deliver(barrier_atom::value);
      self->state.waiting.clear();
    }
  }};
}

/// One participant's loop of barriers; returns the per-barrier times in us, empty on an error.
std::vector<double> barrier_loop(caf::actor_system& sys, const caf::actor& barrier, long long warmup,
                                 long long rounds) {
  caf::scoped_actor self{sys};
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(rounds));
  for (long long k = 0; k < warmup + rounds; ++k) {
    bool ok = true;
    auto start = clock_type::now();
    self->request(barrier, std::chrono::seconds(10), barrier_atom::value)
      .receive([](barrier_atom) {}, [&](caf::error&) { ok = false; });
    if (!ok)
      return {};
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  return us;
}

int barrier_main(int processes, long long warmup, long long rounds) {
  std::vector<int> port_pipes;
  std::vector<pid_t> children;
  for (int p = 1; p < processes; ++p) {
    int fds[2];
    if (::pipe(fds) != 0)
      return 2;
    pid_t child = ::fork();
    if (child == 0) {
      ::alarm(120);
      ::close(fds[1]);
      std::uint16_t port = 0;
      if (::read(fds[0], &port, sizeof port) != sizeof port || port == 0)
        ::_exit(2);
      peer_config cfg;
      caf::actor_system sys{cfg};
      auto remote = sys.middleman().remote_actor("127.0.0.1", port);
      ::_exit(remote && !barrier_loop(sys, *remote, warmup, rounds).empty() ? 0 : 2);
    }
    ::close(fds[0]);
    port_pipes.push_back(fds[1]);
    children.push_back(child);
  }
  ::alarm(120);
  int rc = 2;
  {
    peer_config cfg;
    caf::actor_system sys{cfg};
    auto barrier = sys.spawn(barrier_actor, processes);
    auto port = sys.middleman().publish(barrier, 0, "127.0.0.1");
    std::uint16_t p = port ? *port : 0;
    for (int fd : port_pipes) {
      if (::write(fd, &p, sizeof p) != sizeof p)
        p = 0;
      ::close(fd);
    }
    if (p != 0) {
      auto us = barrier_loop(sys, barrier, warmup, rounds);
      if (!us.empty()) {
        std::printf("raw CAF central barrier, %d processes, %lld rounds: median %.1f us, p10 %.1f, p90 %.1f\n",
                    processes, rounds, percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
        std::printf("RESULT caf_barrier_us %.2f\nRESULT caf_barrier_p10_us %.2f\nRESULT caf_barrier_p90_us %.2f\n",
                    percentile(us, 0.5), percentile(us, 0.1), percentile(us, 0.9));
        std::fflush(stdout);
        rc = 0;
      }
    }
    caf::anon_send_exit(barrier, caf::exit_reason::user_shutdown);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      rc = 2;
  }
  return rc;
}

} // namespace

int run(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "barrier") == 0) {
    am::bench::flags flag(argc, argv, "caf_peer barrier: a central barrier of one CAF actor across processes");
    const auto processes = std::max(2LL, flag.integer("--processes", 4, "processes (at least 2)"));
    const auto warmup = flag.integer("--warmup", 200, "untimed rounds first");
    const auto rounds = std::max(1LL, flag.integer("--rounds", 2000, "timed rounds"));
    flag.finish();
    return barrier_main(static_cast<int>(processes), warmup, rounds);
  }
  am::bench::flags flag(argc, argv, "caf_peer: a CAF request/response round trip between two processes over the middleman");
  long long warmup = flag.integer("--warmup", 500, "untimed rounds first");
  long long rounds = std::max(1LL, flag.integer("--rounds", 5000, "timed rounds"));
  flag.finish();
  int port_pipe[2], quit_pipe[2];
  if (::pipe(port_pipe) != 0 || ::pipe(quit_pipe) != 0)
    return 2;
  pid_t child = ::fork();
  if (child == 0) {
    ::alarm(120);
    ::close(port_pipe[0]);
    ::close(quit_pipe[1]);
    ::_exit(serve(port_pipe[1], quit_pipe[0]));
  }
  ::alarm(120);
  ::close(port_pipe[1]);
  ::close(quit_pipe[0]);
  std::uint16_t port = 0;
  int rc = 2;
  if (::read(port_pipe[0], &port, sizeof port) == sizeof port && port != 0)
    rc = measure(port, warmup, rounds);
  ::close(quit_pipe[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return rc;
}

int main(int argc, char** argv) { return am::bench::guarded_main("caf_peer", run, argc, argv); }
