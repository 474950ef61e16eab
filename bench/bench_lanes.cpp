
// Lane benchmark: a blocking call through a lane (user thread -> device actor -> future) against raw
// CAF round trips, and one-way lane throughput against raw CAF sends. Every figure is measured in
// this run and printed as a ratio against its peer.
//
//   ./build/bench/bench_lanes [--rounds N] [--messages M]
#include <actormesh.hpp>

#include <caf/all.hpp>

#include "bench_flags.hpp"
#include "bench_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using count_atom = caf::atom_constant<caf::atom("count")>;

double micros(clock_type::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

/// Blocking calls through a device lane: a one-element program, then wait for its future.
std::vector<double> lane_round_trips(int rounds) {
  auto d = am::devices()[0];
  am::value_type t{am::dtype::float32, {1}};
  am::program_builder b("tiny");
  b.output(b.binary(am::opcode::add, b.parameter(t), b.constant(1, t)));
  auto prog = b.build();
  float zero = 0;
  std::vector<std::byte> bytes(sizeof zero);
  std::memcpy(bytes.data(), &zero, sizeof zero);
  auto x = am::upload(d, bytes, t);
  x.get();
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds + 100; ++i) {
    auto start = clock_type::now();
    x = am::execute(d, prog, {x})[0];
    x.get(std::chrono::seconds(10));
    if (i >= 100)
      samples.push_back(micros(clock_type::now() - start));
  }
  return samples;
}

/// A raw CAF scoped_actor request/receive per round trip to a detached actor.
std::vector<double> scoped_actor_round_trips(caf::actor_system& sys, int rounds) {
  auto echo = sys.spawn<caf::detached>([](caf::event_based_actor*) -> caf::behavior {
    return {[](ping_atom, int v) { return v + 1; }};
  });
  std::vector<double> samples;
  for (int i = 0; i < rounds + 100; ++i) {
    auto start = clock_type::now();
    caf::scoped_actor self{sys};
    self->request(echo, caf::infinite, ping_atom::value, i).receive([](int) {}, [](caf::error&) {});
    if (i >= 100)
      samples.push_back(micros(clock_type::now() - start));
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return samples;
}

/// Raw CAF request/then between two actors on the scheduler: one actor pings the other `rounds`
/// times in sequence; the mean per round trip is reported through a promise.
double request_then_round_trip(caf::actor_system& sys, int rounds) {
  auto echo = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](ping_atom, int v) { return v + 1; }};
  });
  am::promise<double> result;
  auto done = result.get_future();
  struct pinger_state {
    int left = 0;
    clock_type::time_point start;
  };
  sys.spawn([echo, rounds, result](caf::stateful_actor<pinger_state>* self) {
    self->state.left = rounds;
    self->state.start = clock_type::now();
    std::function<void()> next;
    auto step = std::make_shared<std::function<void()>>();
    *step = [self, echo, rounds, result, step] {
      self->request(echo, caf::infinite, ping_atom::value, self->state.left)
        .then(
          [self, rounds, result, step](int) {
            if (--self->state.left == 0) {
              result.set_value(micros(clock_type::now() - self->state.start) / rounds);
              self->quit();
              return;
            }
            (*step)();
          },
          [self](caf::error&) { self->quit(); });
    };
    (*step)();
  });
  double mean = done.get(std::chrono::seconds(120));
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return mean;
}

/// One-way lane throughput: `messages` calls without waiting, then wait for the last.
double lane_throughput(int messages) {
  auto d = am::devices()[0];
  am::value_type t{am::dtype::float32, {1}};
  am::program_builder b("fill");
  b.output(b.constant(1, t));
  auto prog = b.build();
  auto start = clock_type::now();
  am::shard_future last;
  for (int i = 0; i < messages; ++i)
    last = am::execute(d, prog, {})[0];
  auto sent = clock_type::now();
  last.get(std::chrono::seconds(120));
  fmt::print("  (lane: sending took {:.0f} ns/call, draining {:.0f} ns/call more)\n",
             1000 * micros(sent - start) / messages, 1000 * micros(clock_type::now() - sent) / messages);
  return messages / std::chrono::duration<double>(clock_type::now() - start).count();
}

/// One-way raw CAF throughput: anon_send to a detached actor that counts, then wait for the count.
double caf_throughput(caf::actor_system& sys, int messages) {
  am::promise<void> done;
  auto finished = done.get_future();
  auto counter = sys.spawn<caf::detached>([messages, done](caf::stateful_actor<int>* self) -> caf::behavior {
    self->state = 0;
    return {[self, messages, done](count_atom, int) {
      if (++self->state == messages)
        done.set_value();
    }};
  });
  auto start = clock_type::now();
  for (int i = 0; i < messages; ++i)
    caf::anon_send(counter, count_atom::value, i);
  finished.get(std::chrono::seconds(120));
  double rate = messages / std::chrono::duration<double>(clock_type::now() - start).count();
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
  return rate;
}

} // namespace

int run(int argc, char** argv) {
  am::bench::flags flag(argc, argv, "blocking calls and one-way throughput through a lane, against raw CAF");
  const int rounds = flag.integer("--rounds", 5000, "timed rounds");
  const int messages = flag.integer("--messages", 200000, "one-way messages for the throughput figure");
  flag.finish();
  am::options opts;
  opts.cpu_devices = 1;
  opts.use_gpus = false;
  am::runtime rt(argc, argv, opts);

  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("stealing"));
  caf::actor_system peer_system{cfg};

  auto lane = lane_round_trips(rounds);
  auto scoped = scoped_actor_round_trips(peer_system, rounds / 5);
  double request_then = request_then_round_trip(peer_system, rounds);
  double lane_rate = lane_throughput(messages);
  double caf_rate = caf_throughput(peer_system, messages);

  double lane_med = median(lane);
  double scoped_med = median(scoped);
  fmt::print("actormesh lane benchmark ({} rounds, {} one-way messages, {} cores)\n", rounds, messages,
             std::thread::hardware_concurrency());
  fmt::print("blocking round trip, median (p90):\n");
  fmt::print("  actormesh lane (thread -> device actor -> future)   {:8.2f} us ({:.2f})\n", lane_med,
             percentile(lane, 0.9));
  fmt::print("  raw CAF scoped_actor request                         {:8.2f} us ({:.2f})   peer/lane time {:.2f}\n",
             scoped_med, percentile(scoped, 0.9), scoped_med / lane_med);
  fmt::print("  raw CAF request/then between actors (mean)           {:8.2f} us          peer/lane time {:.2f}\n",
             request_then, request_then / lane_med);
  fmt::print("one-way throughput:\n");
  fmt::print("  actormesh lane calls                                 {:10.0f} /s\n", lane_rate);
  fmt::print("  raw CAF anon_send to a detached actor                {:10.0f} /s   lane/peer rate {:.2f}\n",
             caf_rate, lane_rate / caf_rate);
  am::bench::ratio_line(scoped_med / lane_med, "lane round trip: raw CAF scoped_actor request time / lane time");
  am::bench::ratio_line(lane_rate / caf_rate, "lane one-way calls: lane rate / raw CAF anon_send rate");
  fmt::print("targets: round trip <= 10 us median ({}), throughput >= 0.8x raw CAF ({})\n",
             lane_med <= 10 ? "met" : "missed", lane_rate >= 0.8 * caf_rate ? "met" : "missed");
  return 0;
}

int main(int argc, char** argv) { return am::bench::guarded_main("bench_lanes", run, argc, argv); }
