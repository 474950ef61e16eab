// Program order of colocated calls: one thread's calls run in the order issued; calls of different
// threads run concurrently, so a body that blocks holds up only its own caller's lane.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include "support/colocated_values.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

using am::testing::same_as_first;

std::mutex log_mutex;
std::vector<int> call_log;

const auto append = am::colocated_python("order.append", [](const am::array& x) {
  int v = x.to_host().item<int>();
  std::lock_guard<std::mutex> guard(log_mutex);
  call_log.push_back(v);
  return x;
});

const auto sleep_one_second = am::colocated_python("order.sleep_one_second", [](const am::array& x) {
  std::this_thread::sleep_for(1s);
  return x + 1;
});

std::shared_future<void> release_blocker;
std::atomic<bool> blocker_entered{false};
const auto blocker = am::colocated_python("order.blocker", [](const am::array& x) {
  blocker_entered = true;
  release_blocker.wait_for(30s);
  return x;
});

} // namespace

TEST_CASE("colocated order: one thread's calls run in the order issued", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  call_log.clear();
  auto f = append.specialize({.out_specs_fn = same_as_first}); // every call asynchronous
  std::vector<am::array> outs;
  constexpr int n = 200;
  for (int i = 0; i < n; ++i)
    outs.push_back(f(am::testing::scalar_on_device(i)));
  for (auto& y : outs)
    y.block_until_ready();
  std::vector<int> expected;
  for (int i = 0; i < n; ++i)
    expected.push_back(i);
  CHECK(call_log == expected);
}

TEST_CASE("colocated order: the seed's two 1-second calls from two threads take about 1 s", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto f = sleep_one_second.specialize({.out_specs_fn = same_as_first}); // calls are asynchronous
  auto x = am::testing::scalar_on_device(1);
  auto start = std::chrono::steady_clock::now();
  auto fut1 = std::async(std::launch::async, [&] { return f(x); });
  auto fut2 = std::async(std::launch::async, [&] { return f(x); });
  auto y1 = fut1.get();
  auto y2 = fut2.get();
  y1.block_until_ready();
  y2.block_until_ready();
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(y1.to_host().item<int>() == 2);
  CHECK(y2.to_host().item<int>() == 2);
  // Calls from two threads run concurrently (doc/colocated.md, "Order and concurrency"): run one
  // after the other they would take 2 s. The bound is generous for a loaded machine with few cores.
  CHECK(elapsed < 1800ms);
}

TEST_CASE("colocated order: a blocked body stalls only its own caller's lane", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  std::promise<void> open;
  release_blocker = open.get_future().share();
  auto f = blocker.specialize({.out_specs_fn = same_as_first});
  auto g = append.specialize({.out_specs_fn = same_as_first});
  auto x = am::testing::scalar_on_device(7);
  am::array blocked;
  std::thread other([&] {
    blocked = f(x);
    blocked.block_until_ready(std::chrono::milliseconds(60000));
  });
  for (int i = 0; i < 30000 && !blocker_entered; ++i) // the other body is running (and waits)
    std::this_thread::sleep_for(1ms);
  REQUIRE(blocker_entered);
  // This thread's lane runs while the other thread's body waits (it waits until opened below).
  g(am::testing::scalar_on_device(8)).block_until_ready(std::chrono::milliseconds(30000));
  open.set_value();
  other.join();
  CHECK(blocked.to_host().item<int>() == 7);
}
