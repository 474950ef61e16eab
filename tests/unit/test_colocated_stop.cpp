// Colocated calls and a runtime that stops: later calls are refused, calls still queued in a lane
// fail instead of waiting, and an object's instance still running a method lets the stop finish.
#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include "support/colocated_values.hpp"
#include "support/cpu_options.hpp"

using namespace std::chrono_literals;

namespace {

using am::testing::same_as_first;

std::atomic<bool> slow_entered{false};
const auto slow = am::colocated_python("stop.slow", [](const am::array& x) {
  slow_entered = true;
  std::this_thread::sleep_for(300ms);
  return x;
});

struct sleeper {
  am::array nap(const am::array& x) {
    slow_entered = true;
    std::this_thread::sleep_for(300ms);
    return x;
  }
};
const auto sleeper_class = am::colocated_python_class<sleeper>("stop.sleeper").def("nap", &sleeper::nap);

void wait_until_entered() {
  for (int i = 0; i < 30000 && !slow_entered; ++i)
    std::this_thread::sleep_for(1ms);
  REQUIRE(slow_entered);
}

} // namespace

TEST_CASE("colocated stop: calls after stop() are refused", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  auto x = am::testing::scalar_on_device(1);
  auto f = slow.specialize({.out_specs_fn = same_as_first});
  rt.stop();
  CHECK_THROWS_AS(f(x), am::runtime_error);
}

TEST_CASE("colocated stop: a call still queued behind a running one fails", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  slow_entered = false;
  auto f = slow.specialize({.out_specs_fn = same_as_first});
  auto x = am::testing::scalar_on_device(1);
  x.block_until_ready();
  auto running = f(x);
  auto queued = f(x); // same lane: waits for the first
  wait_until_entered();
  rt.stop(); // waits for the running body only
  CHECK_THROWS_AS(queued.block_until_ready(std::chrono::milliseconds(30000)), am::runtime_error);
}

TEST_CASE("colocated stop: a method still running lets the runtime stop, queued ones fail", "[unit][colocated]") {
  am::runtime rt(am::test::cpu_options(1));
  slow_entered = false;
  auto s = sleeper_class();
  auto nap = s.method<am::array(am::array)>("nap").specialize({.out_specs_fn = same_as_first});
  auto x = am::testing::scalar_on_device(1);
  x.block_until_ready();
  auto running = nap(x);
  auto queued = nap(x);
  wait_until_entered();
  rt.stop();
  CHECK_THROWS_AS(queued.block_until_ready(std::chrono::milliseconds(30000)), am::runtime_error);
}
