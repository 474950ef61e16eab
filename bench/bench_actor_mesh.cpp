// Actor mesh benchmark: a call's round trip to one actor, a call to every actor of a mesh of 32
// with its answers gathered, asynchronous calls from several threads, one-way messages from one
// thread, and a relayed call (a coroutine endpoint awaiting another actor, against one blocking on
// it), each against raw CAF doing the same in the same run (and Ray's actor calls, when Ray is
// installed: bench/ray_peer.py in a child process).
//
//   ./build/bench/bench_actor_mesh [--rounds N] [--threads T] [--calls C] [--messages M] [--actors A]
//                                  [--ray-python PATH | --no-ray] [--ray-script PATH]
#include <actormesh.hpp>

#include <caf/all.hpp>

#include "bench_flags.hpp"
#include "bench_paths.hpp"
#include "bench_report.hpp"
#include "call_peers.hpp"
#include "echo_actors.hpp"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using am::bench::call_clock;
using am::bench::echo;
using am::bench::echo_class;
using am::bench::seconds_since;
using am::bench::spawn_caf_echo;
using am::bench::spawn_caf_relay;
using am::bench::percentile;
using am::bench::ping_atom;
using am::bench::round_trips;

namespace {

/// Raw CAF: one scoped_actor sends a request to each actor, then receives every answer.
std::vector<double> caf_gathers(caf::actor_system& sys, const std::vector<caf::actor>& actors, int rounds) {
  caf::scoped_actor self{sys};
  return round_trips(rounds, [&] {
    for (auto& a : actors)
      self->send(a, ping_atom::value, 1);
    std::size_t answers = 0;
    self->receive_for(answers, actors.size())([](int) {});
  });
}

/// Raw CAF: `threads` scoped actors each send `calls` requests to one actor, then take the answers.
double caf_async_rate(caf::actor_system& sys, const caf::actor& target, int threads, int calls) {
  std::vector<std::thread> workers;
  auto start = call_clock::now();
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      caf::scoped_actor self{sys};
      for (int i = 0; i < calls; ++i)
        self->send(target, ping_atom::value, i);
      std::size_t answers = 0;
      self->receive_for(answers, static_cast<std::size_t>(calls))([](int) {});
    });
  for (auto& w : workers)
    w.join();
  return threads * calls / seconds_since(start);
}


/// `threads` threads each issue `calls` calls through `call` (a future each), then wait for
/// them: calls/s.
template <class Call>
double async_rate(int threads, int calls, Call call) {
  std::vector<std::thread> workers;
  auto start = call_clock::now();
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      std::vector<am::future<int>> answers;
      answers.reserve(static_cast<std::size_t>(calls));
      for (int i = 0; i < calls; ++i)
        answers.push_back(call(i));
      for (auto& a : answers)
        a.get();
    });
  for (auto& w : workers)
    w.join();
  return threads * calls / seconds_since(start);
}

void print_time(const char* what, const std::vector<double>& s, double reference) {
  double med = percentile(s, 0.5);
  fmt::print("  {:<56} {:9.2f} us (p99 {:9.2f})", what, med, percentile(s, 0.99));
  if (reference > 0)
    fmt::print("   mesh/peer time {:.2f}", reference / med);
  fmt::print("\n");
}

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "actor mesh calls against raw CAF (and Ray's actor calls)");
  const int rounds = static_cast<int>(flag.integer("--rounds", 5000, "timed round trips"));
  const int threads = static_cast<int>(flag.integer("--threads", 4, "caller threads of the asynchronous test"));
  const int calls = static_cast<int>(flag.integer("--calls", 20000, "asynchronous calls per thread"));
  const int messages = static_cast<int>(flag.integer("--messages", 200000, "one-way messages"));
  const int actors = static_cast<int>(flag.integer("--actors", 32, "actors of the gathered call"));
  const bool no_ray = flag.present("--no-ray", "skip the Ray peer");
  const auto ray_python = flag.text("--ray-python", am::bench::default_ray_python(), "the Python that runs the Ray peer");
  const auto ray_script = flag.text("--ray-script", am::bench::source_dir() + "/ray_peer.py", "the Ray peer's script");
  flag.finish();
  if (rounds < 1 || threads < 1 || calls < 1 || messages < 1 || actors < 1)
    throw am::value_error("--rounds, --threads, --calls, --messages and --actors must be at least 1");

  am::options opts;
  opts.use_gpus = false;
  opts.cpu_devices = 1;
  am::runtime rt(argc, argv, opts);
  caf::actor_system_config cfg;
  caf::actor_system peer{cfg};

  fmt::print("actormesh actor mesh benchmark ({} rounds; {} actors gathered; {} threads x {} asynchronous calls; "
             "{} one-way messages; {} cores; one process)\n",
             rounds, actors, threads, calls, messages, std::thread::hardware_concurrency());

  auto one = echo_class.spawn(am::actor_layout::per_process());
  auto caf_one = spawn_caf_echo(peer);
  // Interleaved in blocks, so that both sides see the same state of the machine (the scheduler's
  // threads, the caches, the other processes): separate runs moved the raw CAF figure 3x.
  std::vector<double> mesh_trip, caf_trip;
  {
    caf::scoped_actor self{peer};
    for (int done = 0; done < rounds; done += 500) {
      auto block = std::min(500, rounds - done);
      auto m = round_trips(block, [&] { one.call_one(&echo::ping, 1).get(); });
      auto c = round_trips(block, [&] {
        self->request(caf_one, caf::infinite, ping_atom::value, 1).receive([](int) {}, [](caf::error&) {});
      });
      mesh_trip.insert(mesh_trip.end(), m.begin(), m.end());
      caf_trip.insert(caf_trip.end(), c.begin(), c.end());
    }
  }
  auto caf_trip_scheduled = am::bench::caf_round_trips(peer, rounds, false);

  fmt::print("round trip to one actor (call, then wait for the answer; interleaved blocks of 500), median:\n");
  print_time("actor mesh call_one", mesh_trip, 0);
  print_time("raw CAF scoped_actor request to a detached actor", caf_trip, percentile(mesh_trip, 0.5));
  print_time("raw CAF scoped_actor request to a scheduled actor", caf_trip_scheduled, percentile(mesh_trip, 0.5));
  double trip_ratio = percentile(mesh_trip, 0.5) / percentile(caf_trip, 0.5);
  am::bench::ratio_line(trip_ratio, "call_one round trip / raw CAF request to a detached actor");

  auto many = echo_class.spawn(am::actor_layout::over_processes({{"actor", actors}}));
  std::vector<caf::actor> caf_many;
  for (int k = 0; k < actors; ++k)
    caf_many.push_back(spawn_caf_echo(peer));
  auto gather_rounds = std::max(1, rounds / 5);
  auto mesh_gather = round_trips(gather_rounds, [&] { many.call(&echo::ping, 1).get(); });
  auto caf_gather = caf_gathers(peer, caf_many, gather_rounds);
  fmt::print("a call to each of {} actors with every answer gathered, median:\n", actors);
  print_time("actor mesh call (mesh_values of the answers)", mesh_gather, 0);
  print_time("raw CAF: a request to each, then every answer", caf_gather, percentile(mesh_gather, 0.5));
  double gather_ratio = percentile(mesh_gather, 0.5) / percentile(caf_gather, 0.5);
  am::bench::ratio_line(gather_ratio, "gathered call / raw CAF requests");

  double mesh_rate = async_rate(threads, calls, [&](int i) { return one.call_one(&echo::ping, i); });
  double caf_rate = caf_async_rate(peer, caf_one, threads, calls);
  fmt::print("asynchronous calls to one actor from {} threads:\n", threads);
  fmt::print("  {:<56} {:9.0f} calls/s\n", "actor mesh call_one", mesh_rate);
  fmt::print("  {:<56} {:9.0f} calls/s   mesh/peer rate {:.2f}\n", "raw CAF scoped_actor requests", caf_rate,
             mesh_rate / caf_rate);

  auto start = call_clock::now();
  for (int i = 0; i < messages; ++i)
    one.broadcast(&echo::note, i);
  one.call_one(&echo::count).get();
  double mesh_oneway = messages / seconds_since(start);
  start = call_clock::now();
  for (int i = 0; i < messages; ++i)
    caf::anon_send(caf_one, i);
  {
    caf::scoped_actor self{peer};
    self->request(caf_one, caf::infinite, ping_atom::value).receive([](long) {}, [](caf::error&) {});
  }
  double caf_oneway = messages / seconds_since(start);
  fmt::print("one-way messages to one actor from one thread (until the actor has taken them all):\n");
  fmt::print("  {:<56} {:9.0f} msgs/s\n", "actor mesh broadcast on a mesh of one", mesh_oneway);
  fmt::print("  {:<56} {:9.0f} msgs/s   mesh/peer rate {:.2f}\n", "raw CAF anon_send", caf_oneway, mesh_oneway / caf_oneway);
  am::bench::ratio_line(mesh_oneway / caf_oneway, "one-way rate / raw CAF anon_send's");

  // A relay: an actor that answers each call with another actor's answer, awaiting it in a
  // coroutine endpoint, blocking its thread on it, or (raw CAF) through request(...).then.
  auto next = echo_class.spawn(am::actor_layout::per_process());
  auto relay = echo_class.spawn(am::actor_layout::per_process());
  auto caf_next = spawn_caf_echo(peer);
  auto caf_relay = spawn_caf_relay(peer, caf_next);
  std::vector<double> coroutine_trip, blocking_trip, caf_relay_trip;
  {
    caf::scoped_actor self{peer};
    auto relay_rounds = std::max(1, rounds / 2);
    for (int done = 0; done < relay_rounds; done += 500) {
      auto block = std::min(500, relay_rounds - done);
      auto co = round_trips(block, [&] { relay.call_one(&echo::relay, next, 1).get(); });
      auto bl = round_trips(block, [&] { relay.call_one(&echo::relay_blocking, next, 1).get(); });
      auto c = round_trips(block, [&] {
        self->request(caf_relay, caf::infinite, ping_atom::value, 1).receive([](int) {}, [](caf::error&) {});
      });
      coroutine_trip.insert(coroutine_trip.end(), co.begin(), co.end());
      blocking_trip.insert(blocking_trip.end(), bl.begin(), bl.end());
      caf_relay_trip.insert(caf_relay_trip.end(), c.begin(), c.end());
    }
  }
  fmt::print("a relayed call (the actor answers with another actor's answer; interleaved blocks of 500), median:\n");
  print_time("actor mesh coroutine endpoint (co_await call_one)", coroutine_trip, 0);
  print_time("actor mesh endpoint blocking on call_one(...).get()", blocking_trip, percentile(coroutine_trip, 0.5));
  print_time("raw CAF relay through request(...).then", caf_relay_trip, percentile(coroutine_trip, 0.5));
  am::bench::ratio_line(percentile(coroutine_trip, 0.5) / percentile(caf_relay_trip, 0.5),
                        "coroutine relay round trip / raw CAF request-then relay");
  auto relay_calls = std::max(1, calls / 4);
  double coroutine_rate = async_rate(threads, relay_calls, [&](int i) { return relay.call_one(&echo::relay, next, i); });
  double blocking_rate =
    async_rate(threads, relay_calls, [&](int i) { return relay.call_one(&echo::relay_blocking, next, i); });
  double caf_then_rate = caf_async_rate(peer, caf_relay, threads, relay_calls);
  fmt::print("asynchronous relayed calls from {} threads:\n", threads);
  fmt::print("  {:<56} {:9.0f} calls/s\n", "actor mesh coroutine endpoint", coroutine_rate);
  fmt::print("  {:<56} {:9.0f} calls/s   coroutine/blocking rate {:.2f}\n", "actor mesh blocking endpoint",
             blocking_rate, coroutine_rate / blocking_rate);
  fmt::print("  {:<56} {:9.0f} calls/s   coroutine/peer rate {:.2f}\n", "raw CAF request(...).then relay",
             caf_then_rate, coroutine_rate / caf_then_rate);
  am::bench::ratio_line(coroutine_rate / caf_then_rate, "coroutine relay rate / raw CAF request-then relay's");
  caf::anon_send_exit(caf_relay, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(caf_next, caf::exit_reason::user_shutdown);

  std::optional<am::bench::ray_figures> ray;
  if (no_ray)
    fmt::print("  Ray: skipped (--no-ray)\n");
  else
    ray = am::bench::run_ray(ray_python, ray_script, std::min(rounds, 2000), std::min(calls * threads, 20000));
  if (ray) {
    fmt::print("Ray actor calls (bench/ray_peer.py, same run):\n");
    fmt::print("  {:<56} {:9.2f} us   peer/mesh time {:.1f}\n", "synchronous call", ray->median_us,
               ray->median_us / percentile(mesh_trip, 0.5));
    fmt::print("  {:<56} {:9.0f} calls/s   mesh/Ray rate {:.1f}\n", "asynchronous calls", ray->async_per_s,
               mesh_rate / ray->async_per_s);
  }
  fmt::print("targets: call_one <= 1.2x a raw CAF request ({:.2f}x: {}); one-way >= 0.8x anon_send ({:.2f}x: {})",
             trip_ratio, trip_ratio <= 1.2 ? "met" : "missed", mesh_oneway / caf_oneway,
             mesh_oneway >= 0.8 * caf_oneway ? "met" : "missed");
  if (ray)
    fmt::print("; async >= 100x Ray's ({:.0f}x: {})", mesh_rate / ray->async_per_s,
               mesh_rate >= 100 * ray->async_per_s ? "met" : "missed");
  fmt::print("\n");
  for (auto& a : caf_many)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(caf_one, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) { return am::bench::guarded_main("bench_actor_mesh", run, argc, argv); }
