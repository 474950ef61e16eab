// Actor meshes across processes, against raw CAF in the same processes and the same run: process 0
// measures a call's round trip to an actor of process 1, a call to each of 32 actors spread over
// every process with the answers gathered, asynchronous calls from 4 threads to one actor of
// process 1, and one-way messages to it from one thread. The raw CAF peers are echo actors spawned
// in the same actor systems (the runtime's, so configured the same way), published through CAF's
// middleman, and reached with remote_actor: a scoped_actor's request, 32 requests then 32 answers,
// requests from 4 scoped_actors, anon_send.
//
//   actormesh launch -n 4 --cpu-devices 1 -- ./build-bench/bench/bench_actor_mesh_processes
//       [--rounds N] [--actors A] [--threads T] [--calls C] [--messages M]
#include <actormesh.hpp>

#include "actors/cluster_services.hpp"
#include "devices/detail/actor_system_of.hpp"
#include "devices/runtime_context.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"
#include "call_peers.hpp"
#include "echo_actors.hpp"

#include <fmt/core.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using am::bench::call_clock;
using am::bench::echo;
using am::bench::echo_class;
using am::bench::seconds_since;
using am::bench::spawn_caf_echo;
using am::bench::percentile;
using am::bench::ping_atom;
using am::bench::round_trips;
using namespace std::chrono_literals;

namespace {

void print_pair(const char* what, const std::vector<double>& mesh, const std::vector<double>& raw) {
  double m = percentile(mesh, 0.5), r = percentile(raw, 0.5);
  fmt::print("  {:<44} actor mesh {:8.1f} us (p10 {:7.1f}, p90 {:7.1f}); raw CAF {:8.1f} us (p10 {:7.1f}, p90 {:7.1f}); "
             "mesh/raw {:.2f}\n",
             what, m, percentile(mesh, 0.1), percentile(mesh, 0.9), r, percentile(raw, 0.1), percentile(raw, 0.9), m / r);
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "actor mesh calls across processes against raw CAF remote requests");
  const int rounds = static_cast<int>(flag.integer("--rounds", 3000, "timed round trips"));
  const int actors = static_cast<int>(flag.integer("--actors", 32, "actors of the gathered call (a multiple of the process count)"));
  const int threads = static_cast<int>(flag.integer("--threads", 4, "threads of the asynchronous test"));
  const int calls = static_cast<int>(flag.integer("--calls", 5000, "asynchronous calls per thread"));
  const int messages = static_cast<int>(flag.integer("--messages", 100000, "one-way messages"));
  flag.finish();
  am::runtime rt(argc, argv);
  const int me = am::process_index();
  const int n = am::process_count();
  if (n < 2)
    throw am::value_error("run it under `actormesh launch -n 4 --cpu-devices 1`: it measures calls between processes");
  auto context = am::detail::current_context();
  auto& sys = am::detail::actor_system_of(*context);
  auto& cluster = context->cluster();

  // The raw CAF peers: actors/n echo actors in every process, published, their ports in the store.
  const int per_process = std::max(1, actors / n);
  std::vector<caf::actor> own;
  std::string ports;
  for (int k = 0; k < per_process; ++k) {
    own.push_back(spawn_caf_echo(sys));
    auto port = sys.middleman().publish(own.back(), 0, "127.0.0.1");
    if (!port)
      throw am::runtime_error("publish: " + sys.render(port.error()));
    ports += std::to_string(*port) + " ";
  }
  cluster.kv_set("bench.caf." + std::to_string(me), ports);
  auto single = echo_class.spawn(am::actor_layout::per_process());
  auto many = echo_class.spawn(am::actor_layout::over_processes({{"actor", per_process * n}}));
  am::multihost::sync_global_devices("bench.ready");
  if (me == 0) {
    std::vector<caf::actor> raw;
    for (int p = 0; p < n; ++p) {
      auto text = cluster.kv_get("bench.caf." + std::to_string(p), 30s);
      std::size_t at = 0;
      while (at < text.size()) {
        auto end = text.find(' ', at);
        auto port = static_cast<std::uint16_t>(std::stoi(text.substr(at, end - at)));
        at = end + 1;
        if (p == 0) {
          raw.push_back(own[raw.size()]);
          continue;
        }
        auto remote = sys.middleman().remote_actor("127.0.0.1", port);
        if (!remote)
          throw am::runtime_error("remote_actor: " + sys.render(remote.error()));
        raw.push_back(*remote);
      }
    }
    auto raw_one = raw.at(static_cast<std::size_t>(per_process)); // process 1's first
    auto one = single.slice("process", 1);
    fmt::print("actor meshes across {} processes (launch, loopback), {} cores; process 0 measures; median of {} rounds:\n",
               n, std::thread::hardware_concurrency(), rounds);
    caf::scoped_actor self{sys};
    std::vector<double> mesh_trip, raw_trip;
    for (int done = 0; done < rounds; done += 500) {
      auto block = std::min(500, rounds - done);
      auto m = round_trips(block, [&] { one.call_one(&echo::ping, 1).get(30s); });
      auto r = round_trips(block, [&] {
        self->request(raw_one, caf::infinite, ping_atom::value, 1).receive([](int) {}, [](caf::error&) {});
      });
      mesh_trip.insert(mesh_trip.end(), m.begin(), m.end());
      raw_trip.insert(raw_trip.end(), r.begin(), r.end());
    }
    print_pair("call_one to an actor of process 1", mesh_trip, raw_trip);
    am::bench::ratio_line(percentile(mesh_trip, 0.5) / percentile(raw_trip, 0.5), "cross-process call_one / raw CAF request");

    const int gather_rounds = std::max(1, rounds / 5);
    std::vector<double> mesh_gather, raw_gather;
    for (int done = 0; done < gather_rounds; done += 100) {
      auto block = std::min(100, gather_rounds - done);
      auto m = round_trips(block, [&] { many.call(&echo::ping, 1).get(30s); });
      auto r = round_trips(block, [&] {
        for (auto& a : raw)
          self->send(a, ping_atom::value, 1);
        std::size_t answers = 0;
        self->receive_for(answers, raw.size())([](int) {});
      });
      mesh_gather.insert(mesh_gather.end(), m.begin(), m.end());
      raw_gather.insert(raw_gather.end(), r.begin(), r.end());
    }
    print_pair(fmt::format("call on {} actors, answers gathered", raw.size()).c_str(), mesh_gather, raw_gather);
    am::bench::ratio_line(percentile(mesh_gather, 0.5) / percentile(raw_gather, 0.5), "gathered call / raw CAF requests");

    auto start = call_clock::now();
    {
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
          std::vector<am::future<int>> answers;
          answers.reserve(static_cast<std::size_t>(calls));
          for (int i = 0; i < calls; ++i)
            answers.push_back(one.call_one(&echo::ping, i));
          for (auto& a : answers)
            a.get(60s);
        });
      for (auto& w : workers)
        w.join();
    }
    double mesh_rate = threads * calls / seconds_since(start);
    start = call_clock::now();
    {
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
          caf::scoped_actor caller{sys};
          for (int i = 0; i < calls; ++i)
            caller->send(raw_one, ping_atom::value, i);
          std::size_t answers = 0;
          caller->receive_for(answers, static_cast<std::size_t>(calls))([](int) {});
        });
      for (auto& w : workers)
        w.join();
    }
    double raw_rate = threads * calls / seconds_since(start);
    fmt::print("  {:<44} actor mesh {:9.0f} calls/s; raw CAF {:9.0f} calls/s; mesh/raw rate {:.2f}\n",
               fmt::format("asynchronous calls from {} threads", threads), mesh_rate, raw_rate, mesh_rate / raw_rate);

    start = call_clock::now();
    for (int i = 0; i < messages; ++i)
      one.broadcast(&echo::note, i);
    one.call_one(&echo::count).get(60s);
    double mesh_oneway = messages / seconds_since(start);
    start = call_clock::now();
    for (int i = 0; i < messages; ++i)
      caf::anon_send(raw_one, i);
    self->request(raw_one, caf::infinite, ping_atom::value).receive([](long) {}, [](caf::error&) {});
    double raw_oneway = messages / seconds_since(start);
    fmt::print("  {:<44} actor mesh {:9.0f} msgs/s; raw CAF {:9.0f} msgs/s; mesh/raw rate {:.2f}\n",
               "one-way messages from one thread", mesh_oneway, raw_oneway, mesh_oneway / raw_oneway);
    am::bench::ratio_line(mesh_oneway / raw_oneway, "cross-process one-way rate / raw CAF anon_send's");
    fmt::print("targets: call_one <= 1.2x a raw CAF request ({:.2f}x: {}); one-way >= 0.8x anon_send ({:.2f}x: {})\n",
               percentile(mesh_trip, 0.5) / percentile(raw_trip, 0.5),
               percentile(mesh_trip, 0.5) <= 1.2 * percentile(raw_trip, 0.5) ? "met" : "missed", mesh_oneway / raw_oneway,
               mesh_oneway >= 0.8 * raw_oneway ? "met" : "missed");
  }
  am::multihost::sync_global_devices("bench.done");
  for (auto& a : own)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_actor_mesh_processes", run, argc, argv); }
