// Lane ordering under load (Taskflow style: the same body at several thread counts, each case with
// its own ctest timeout). Every thread runs chains of order-sensitive programs on every device while
// the other threads do the same; a chain computed out of order gives a different value. The device
// count comes from the environment (AM_CPU_DEVICES; ctest runs this at 1, 8 and 64 devices).
#include "support/programs.hpp"
#include "support/stress.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

namespace {

constexpr int steps_per_chain = 60;
constexpr int chains_per_device = 3;

/// Runs the order check with `threads` callers on every device of the stress runtime; returns the
/// number of chains whose result shows an order violation.
int device_lane_violations(int threads) {
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  std::vector<std::shared_ptr<const am::program>> programs;
  for (int s = 0; s < steps_per_chain; ++s)
    programs.push_back(am::testing::step_program(s));
  std::atomic<int> violations{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int c = 0; c < chains_per_device; ++c) {
        std::vector<am::shard_future> heads;
        std::vector<std::int64_t> starts;
        for (auto& d : devs) {
          std::int64_t start = 100000 * t + 100 * c + d.id;
          starts.push_back(start);
          heads.push_back(am::upload(d, am::testing::to_bytes(std::vector<std::int64_t>(4, start)),
                                     {am::dtype::int64, {4}}));
        }
        for (auto& p : programs)
          for (std::size_t k = 0; k < devs.size(); ++k)
            heads[k] = am::execute(devs[k], p, {heads[k]})[0];
        for (std::size_t k = 0; k < devs.size(); ++k) {
          auto got = am::testing::from_bytes<std::int64_t>(am::fetch(devs[k], heads[k]).get(60s));
          if (got != std::vector<std::int64_t>(4, am::testing::expected_chain(starts[k], 0, steps_per_chain)))
            ++violations;
        }
      }
    });
  for (auto& w : workers)
    w.join();
  return violations.load();
}

/// Every thread appends to its own log through the host actor; each log must come out in order,
/// and the host lanes must accept all callers at once (while the stress runtime's device threads
/// share the cores).
bool host_lanes_in_order(int threads) {
  am::runtime rt(am::test::stress_options());
  constexpr int calls = 300;
  std::vector<std::vector<int>> logs(static_cast<std::size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      auto& log = logs[static_cast<std::size_t>(t)];
      std::vector<am::future<void>> fs;
      for (int i = 0; i < calls; ++i)
        fs.push_back(am::host_call([&log, i] { log.push_back(i); }));
      for (auto& f : fs)
        f.get(60s);
    });
  for (auto& w : workers)
    w.join();
  for (auto& log : logs) {
    if (log.size() != static_cast<std::size_t>(calls))
      return false;
    for (int i = 0; i < calls; ++i)
      if (log[static_cast<std::size_t>(i)] != i)
        return false;
  }
  return true;
}

} // namespace

#define AM_LANE_STRESS_CASE(N)                                                                    \
  TEST_CASE("device lanes keep every caller's order with " #N " threads", "[stress][lanes]") {    \
    CHECK(device_lane_violations(N) == 0);                                                        \
  }                                                                                               \
  TEST_CASE("host lanes keep every caller's order with " #N " threads", "[stress][host]") {       \
    CHECK(host_lanes_in_order(N));                                                                \
  }

AM_LANE_STRESS_CASE(1)
AM_LANE_STRESS_CASE(2)
AM_LANE_STRESS_CASE(4)
AM_LANE_STRESS_CASE(8)
AM_LANE_STRESS_CASE(16)
