// The mesh supervisor and its clients under concurrent use, in one process (no networking, so it
// runs under ThreadSanitizer with the rest of the stress label): several "processes" (cluster
// clients in one actor system) each with several threads issuing barriers, store operations and
// collective checks at once; and clients closed while their threads wait.
#include "support/watchdog.hpp"

#include "cluster/cluster_client.hpp"
#include "cluster/supervisor.hpp"
#include "actormesh/actors/errors.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::detail::cluster_client;

/// A cluster of `processes` clients around one supervisor, all inside one actor system.
struct local_cluster {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> system;
  caf::actor supervisor;
  std::vector<std::unique_ptr<cluster_client>> clients;
  bool closed_one = false; ///< a test closed a client: nobody can leave together any more

  explicit local_cluster(int processes) {
    cfg.set("scheduler.policy", caf::atom("sharing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    system = std::make_unique<caf::actor_system>(cfg);
    am::detail::supervisor_config sc;
    sc.process_count = processes;
    sc.version = "test";
    sc.coordinator = "in-process";
    sc.join_timeout = 20s;
    sc.heartbeat_timeout = 0ms;
    supervisor = am::detail::spawn_supervisor(*system, sc);
    for (int p = 0; p < processes; ++p) {
      am::detail::join_request req;
      req.version = "test";
      req.process = p;
      req.process_count = processes;
      req.host = "local";
      req.devices = {{0, p, am::platform::cpu, 0}, {0, p, am::platform::cpu, 1}};
      am::detail::client_config cc;
      cc.coordinator = "in-process";
      cc.heartbeat_interval = 0ms;
      clients.push_back(std::make_unique<cluster_client>(*system, supervisor, req, cc));
    }
    for (auto& c : clients)
      c->wait_joined(20s);
  }

  ~local_cluster() {
    // A distributed leave first, all processes at once (each waits for the others), so the exits
    // below are departures, not failures.
    std::vector<std::thread> leaving;
    for (auto& c : clients)
      if (!closed_one)
        leaving.emplace_back([&c] { c->leave(5s); });
    for (auto& t : leaving)
      t.join();
    for (auto& c : clients)
      caf::anon_send_exit(c->actor(), caf::exit_reason::user_shutdown);
    caf::anon_send_exit(supervisor, caf::exit_reason::user_shutdown);
    system.reset();
    for (auto& c : clients)
      c->close("stopped");
  }
};

/// Threads per process for the sweep.
const int thread_counts[] = {1, 2, 4};

} // namespace

TEST_CASE("barriers, the store and collective checks from many threads of many processes", "[stress][cluster]") {
  for (int threads : thread_counts) {
    am::test::run_bounded("supervisor race with " + std::to_string(threads) + " threads", 120s, [&] {
      constexpr int processes = 4;
      constexpr int rounds = 40;
      local_cluster cluster(processes);
      auto& dir = cluster.clients[0]->directory();
      REQUIRE(dir.devices.size() == 8);
      CHECK(dir.devices[5].process_index == 2);
      std::atomic<int> failures{0};
      std::vector<std::thread> workers;
      for (int p = 0; p < processes; ++p)
        for (int t = 0; t < threads; ++t)
          workers.emplace_back([&, p, t] {
            auto& c = *cluster.clients[static_cast<std::size_t>(p)];
            std::vector<int> all{0, 1, 2, 3};
            try {
              for (int r = 0; r < rounds; ++r) {
                std::string tag = std::to_string(t) + "/" + std::to_string(r);
                c.barrier("b" + std::to_string(t), 20s);
                c.kv_set("k" + tag + "/" + std::to_string(p), std::to_string(p * 1000 + r));
                auto other = (p + 1) % processes;
                if (c.kv_get("k" + tag + "/" + std::to_string(other), 20s) != std::to_string(other * 1000 + r))
                  ++failures;
                c.check_collective("comm" + std::to_string(t), static_cast<std::uint64_t>(r), all,
                                   "all_reduce(sum) float32[" + std::to_string(r) + "]", 20s);
              }
            } catch (const std::exception& e) {
              UNSCOPED_INFO(e.what());
              ++failures;
            }
          });
      for (auto& w : workers)
        w.join();
      CHECK(failures == 0);
    });
  }
}

TEST_CASE("a desync in one thread's communicator leaves the others' collectives alone", "[stress][cluster]") {
  am::test::run_bounded("desync beside healthy communicators", 120s, [&] {
    local_cluster cluster(3);
    std::atomic<int> desyncs{0}, oks{0}, others{0};
    std::vector<std::thread> workers;
    for (int p = 0; p < 3; ++p)
      for (int t = 0; t < 3; ++t)
        workers.emplace_back([&, p, t] {
          auto& c = *cluster.clients[static_cast<std::size_t>(p)];
          for (int r = 0; r < 20; ++r) {
            // Communicator 0 disagrees at step 7 (process 2 issues another shape); the rest agree.
            std::string sig = (t == 0 && r == 7 && p == 2) ? "all_gather int32[3]" : "all_gather int32[2]";
            try {
              c.check_collective("c" + std::to_string(t), static_cast<std::uint64_t>(r), {0, 1, 2}, sig, 20s);
              ++oks;
            } catch (const am::desync_error&) {
              ++desyncs;
            } catch (...) {
              ++others;
            }
          }
        });
    for (auto& w : workers)
      w.join();
    CHECK(desyncs == 3);      // step 7 of communicator 0, on each of the 3 processes
    CHECK(oks == 3 * 3 * 20 - 3);
    CHECK(others == 0);
  });
}

TEST_CASE("closing a client while its threads wait fails them at once", "[stress][cluster]") {
  for (int threads : thread_counts) {
    am::test::run_bounded("close with " + std::to_string(threads) + " waiting threads", 60s, [&] {
      local_cluster cluster(2);
      std::atomic<int> stopped{0};
      std::vector<std::thread> waiters;
      for (int t = 0; t < threads; ++t)
        waiters.emplace_back([&, t] {
          try {
            // Process 1 never comes to these barriers.
            cluster.clients[0]->barrier("never " + std::to_string(t), 30s);
          } catch (const am::runtime_error&) {
            ++stopped;
          }
        });
      std::this_thread::sleep_for(100ms);
      auto start = std::chrono::steady_clock::now();
      cluster.closed_one = true;
      cluster.clients[0]->close("closed by the test");
      for (auto& w : waiters)
        w.join();
      CHECK(stopped == threads);
      CHECK(std::chrono::steady_clock::now() - start < 5s);
      CHECK_THROWS_AS(cluster.clients[0]->barrier("after close", 1s), am::runtime_error);
    });
  }
}
