// am::runtime_stats() (observability/runtime_stats.hpp): the live counters match the work done:
// N calls on each of D devices from several threads, a stalled device's queue depth, host lanes'
// tasks, rates, and a second runtime starting from zero.
#include "support/programs.hpp"

#include "actormesh.hpp"
#include "observability/stats_counters.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace std::chrono_literals;
using am::testing::from_bytes;
using am::testing::to_bytes;

namespace {

am::options devices_only(int count) {
  am::options o;
  o.cpu_devices = count;
  o.use_gpus = false;
  return o;
}

const am::device_activity& activity_of(const am::runtime_stats_snapshot& s, int device_id) {
  for (auto& d : s.devices)
    if (d.device_id == device_id)
      return d;
  FAIL("device " << device_id << " is not in the snapshot");
  throw std::logic_error("unreachable");
}

/// Uploads a vector to `d`, runs `steps` step programs on it and fetches it: steps + 2 calls.
std::int64_t run_chain(const am::device& d, int steps) {
  am::value_type t{am::dtype::int64, {4}};
  auto x = am::upload(d, to_bytes(std::vector<std::int64_t>{1, 1, 1, 1}), t);
  for (int i = 0; i < steps; ++i)
    x = am::execute(d, am::testing::step_program(1), {x})[0];
  return from_bytes<std::int64_t>(am::fetch(d, x).get(30s))[0];
}

/// What run_chain returns: x -> 3x + 1, `steps` times from 1.
std::int64_t chain_value(int steps) {
  std::int64_t v = 1;
  for (int i = 0; i < steps; ++i)
    v = v * 3 + 1;
  return v;
}

} // namespace

TEST_CASE("runtime_stats counts every call of several threads on every device", "[stats]") {
  constexpr int device_count = 4, threads = 4, steps = 25;
  am::runtime rt(devices_only(device_count));
  auto devices = am::devices();
  REQUIRE(static_cast<int>(devices.size()) == device_count);
  auto before = am::runtime_stats();
  REQUIRE(before.devices.size() == static_cast<std::size_t>(device_count));
  for (auto& d : before.devices) {
    CHECK(d.calls_done == 0);
    CHECK(d.queue_depth == 0);
    CHECK(d.has_memory);
  }
  std::vector<std::thread> workers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&] {
      for (auto& d : devices)
        if (run_chain(d, steps) != chain_value(steps))
          ++wrong;
    });
  for (auto& w : workers)
    w.join();
  CHECK(wrong == 0);
  auto after = am::runtime_stats();
  CHECK(after.process_index == 0);
  CHECK(after.interval_seconds > 0);
  CHECK(after.uptime_seconds >= after.interval_seconds);
  for (auto& d : devices) {
    auto& a = activity_of(after, d.id);
    CHECK(a.device == to_string(d));
    CHECK(a.calls_queued == static_cast<std::uint64_t>(threads * (steps + 2)));
    CHECK(a.calls_done == static_cast<std::uint64_t>(threads * (steps + 2)));
    CHECK(a.queue_depth == 0);
    CHECK(a.calls_per_second > 0);
    CHECK(a.memory.num_allocs >= static_cast<std::uint64_t>(threads * (steps + 1)));
  }
  CHECK(after.transfers.bytes_in_flight == 0);
}

TEST_CASE("runtime_stats shows calls queued behind an input that is not ready", "[stats]") {
  am::runtime rt(devices_only(2));
  auto d = am::devices()[1];
  am::value_type t{am::dtype::int64, {4}};
  am::promise<am::buffer_ref> never;
  am::shard_future pending = never.get_future();
  std::vector<am::shard_future> outs;
  auto x = pending;
  for (int i = 0; i < 5; ++i)
    outs.push_back(x = am::execute(d, am::testing::step_program(1), {x})[0]);
  // The device takes the calls and parks them behind the first one's input.
  am::runtime_stats_snapshot s;
  for (int tries = 0; tries < 200; ++tries) {
    s = am::runtime_stats();
    if (activity_of(s, d.id).calls_queued == 5)
      break;
    std::this_thread::sleep_for(10ms);
  }
  CHECK(activity_of(s, d.id).calls_queued == 5);
  CHECK(activity_of(s, d.id).calls_done == 0);
  CHECK(activity_of(s, d.id).queue_depth == 5);
  never.set_error(std::make_exception_ptr(am::value_error("input withdrawn")));
  CHECK_THROWS_AS(outs.back().get(30s), am::value_error);
  s = am::runtime_stats();
  CHECK(activity_of(s, d.id).calls_done == 5);
  CHECK(activity_of(s, d.id).queue_depth == 0);
}

TEST_CASE("runtime_stats counts the tasks of this thread's host lane", "[stats]") {
  am::runtime rt(devices_only(1));
  constexpr int tasks = 40;
  std::vector<am::future<int>> results;
  for (int i = 0; i < tasks; ++i)
    results.push_back(am::host_call([i] { return i; }));
  for (int i = 0; i < tasks; ++i)
    REQUIRE(results[static_cast<std::size_t>(i)].get(30s) == i);
  auto s = am::runtime_stats();
  const am::lane_activity* mine = nullptr;
  for (auto& l : s.lanes)
    if (l.caller == am::this_caller())
      mine = &l;
  REQUIRE(mine != nullptr);
  // The last task's result is set inside it, so its count may lag a moment.
  for (int tries = 0; tries < 200 && mine->tasks_done < tasks; ++tries) {
    std::this_thread::sleep_for(5ms);
    s = am::runtime_stats();
    for (auto& l : s.lanes)
      if (l.caller == am::this_caller())
        mine = &l;
  }
  CHECK(mine->tasks_queued == tasks);
  CHECK(mine->tasks_done == tasks);
  CHECK(mine->queue_depth == 0);
}

TEST_CASE("a new runtime's devices start counting from zero", "[stats]") {
  {
    am::runtime rt(devices_only(2));
    run_chain(am::devices()[0], 3);
    CHECK(activity_of(am::runtime_stats(), am::devices()[0].id).calls_done == 5);
  }
  CHECK_THROWS_AS(am::runtime_stats(), am::runtime_error);
  am::runtime rt(devices_only(3));
  auto s = am::runtime_stats();
  CHECK(s.devices.size() == 3);
  for (auto& d : s.devices) {
    CHECK(d.calls_done == 0);
    CHECK(d.calls_per_second == 0);
  }
}

TEST_CASE("runtime_stats from many threads while calls run: counts only grow, depth stays bounded", "[stats]") {
  constexpr int device_count = 2, workers = 2, readers = 4, steps = 10, rounds = 30;
  am::runtime rt(devices_only(device_count));
  auto devices = am::devices();
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < readers; ++r)
    threads.emplace_back([&] {
      std::vector<std::uint64_t> last(device_count, 0);
      for (int i = 0; i < 100000 && !done; ++i) {
        auto s = am::runtime_stats();
        for (std::size_t k = 0; k < s.devices.size() && k < last.size(); ++k) {
          auto& d = s.devices[k];
          if (d.calls_done < last[k] || d.queue_depth > static_cast<std::uint64_t>(workers * (steps + 2)))
            ++bad;
          last[k] = d.calls_done;
        }
      }
    });
  std::vector<std::thread> callers;
  for (int w = 0; w < workers; ++w)
    callers.emplace_back([&] {
      for (int r = 0; r < rounds; ++r)
        for (auto& d : devices)
          run_chain(d, steps);
    });
  for (auto& c : callers)
    c.join();
  done = true;
  for (auto& t : threads)
    t.join();
  CHECK(bad == 0);
  auto s = am::runtime_stats();
  for (auto& d : s.devices)
    CHECK(d.calls_done == static_cast<std::uint64_t>(workers * rounds * (steps + 2)));
}

TEST_CASE("transfer counters: bytes are in flight while a transfer moves them, then sent or received", "[stats]") {
  am::runtime rt(devices_only(1));
  auto before = am::runtime_stats().transfers;
  {
    am::detail::stats::transfer_in_flight sending(1000, true);
    am::detail::stats::transfer_in_flight receiving(24, false);
    auto during = am::runtime_stats().transfers;
    CHECK(during.bytes_in_flight == before.bytes_in_flight + 1024);
    sending.done();
    receiving.done();
  }
  {
    am::detail::stats::transfer_in_flight broken(500, true); // fails before done(): never counted as sent
  }
  auto after = am::runtime_stats().transfers;
  CHECK(after.bytes_in_flight == before.bytes_in_flight);
  CHECK(after.bytes_sent == before.bytes_sent + 1000);
  CHECK(after.bytes_received == before.bytes_received + 24);
  CHECK(after.transfers == before.transfers + 2);
}
