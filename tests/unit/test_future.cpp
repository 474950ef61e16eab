// Futures resolved from another thread: values, errors, timeouts, callbacks, broken promises.
#include "actors/future.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace std::chrono_literals;

TEST_CASE("a promise resolved on another thread wakes the waiter", "[future]") {
  am::promise<int> p;
  auto f = p.get_future();
  CHECK_FALSE(f.ready());
  std::thread t([p] {
    std::this_thread::sleep_for(20ms);
    p.set_value(42);
  });
  CHECK(f.get() == 42);
  CHECK(f.ready());
  t.join();
}

TEST_CASE("get with a timeout throws timeout_error when nothing arrives", "[future]") {
  am::promise<int> p;
  auto f = p.get_future();
  CHECK_FALSE(f.wait_for(10ms));
  CHECK_THROWS_AS(f.get(10ms), am::timeout_error);
  p.set_value(1);
  CHECK(f.get(10ms) == 1);
}

TEST_CASE("an error stored in the promise is rethrown by every get", "[future]") {
  am::promise<void> p;
  auto f = p.get_future();
  p.set_error(std::make_exception_ptr(am::value_error("bad")));
  CHECK_THROWS_WITH(f.get(), "bad");
  CHECK_THROWS_AS(f.get(), am::value_error);
}

TEST_CASE("a promise resolves only once", "[future]") {
  am::promise<int> p;
  CHECK(p.set_value(1));
  CHECK_FALSE(p.set_value(2));
  CHECK_FALSE(p.set_error(std::make_exception_ptr(am::value_error("late"))));
  CHECK(p.get_future().get() == 1);
}

TEST_CASE("on_ready runs at once when ready and later otherwise", "[future]") {
  am::promise<int> p;
  auto f = p.get_future();
  int calls = 0;
  f.on_ready([&] { ++calls; });
  CHECK(calls == 0);
  p.set_value(3);
  CHECK(calls == 1);
  f.on_ready([&] { ++calls; });
  CHECK(calls == 2);
}

TEST_CASE("dropping every copy of an unresolved promise fails the future", "[future]") {
  am::future<int> f;
  {
    am::promise<int> p;
    f = p.get_future();
    auto copy = p;
  }
  REQUIRE(f.ready());
  CHECK_THROWS_AS(f.get(), am::runtime_error);
}

TEST_CASE("an invalid future says so instead of crashing", "[future]") {
  am::future<int> f;
  CHECK_FALSE(f.valid());
  CHECK_THROWS_AS(f.get(), am::runtime_error);
}

TEST_CASE("many waiters on one future all wake", "[future]") {
  am::promise<int> p;
  auto f = p.get_future();
  std::vector<std::thread> waiters;
  std::atomic<int> woke{0};
  for (int i = 0; i < 8; ++i)
    waiters.emplace_back([f, &woke] {
      if (f.get(10s) == 7)
        ++woke;
    });
  std::this_thread::sleep_for(10ms);
  p.set_value(7);
  for (auto& w : waiters)
    w.join();
  CHECK(woke == 8);
}
