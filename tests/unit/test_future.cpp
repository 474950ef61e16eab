// Futures resolved from another thread: values, errors, timeouts, callbacks, broken promises.
#include "actormesh/actors/future.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>
#include <type_traits>
#include <vector>

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

namespace {

/// Counts its copies, to tell a copy from a move.
struct copy_counter {
  explicit copy_counter(std::vector<int> v) : values(std::move(v)) {}
  copy_counter(const copy_counter& other) : values(other.values), copies(other.copies + 1) {}
  copy_counter(copy_counter&&) noexcept = default;
  copy_counter& operator=(const copy_counter&) = default;
  copy_counter& operator=(copy_counter&&) noexcept = default;
  std::vector<int> values;
  int copies = 0;
};

/// A future already resolved with `v`, whose promise is gone.
am::future<std::vector<int>> resolved(std::vector<int> v) {
  am::promise<std::vector<int>> p;
  p.set_value(std::move(v));
  return p.get_future();
}

} // namespace

TEST_CASE("get on a temporary future returns the value itself, so a range-for over it is safe", "[future]") {
  using namespace std::chrono_literals;
  static_assert(std::is_same_v<decltype(resolved({}).get()), std::vector<int>>);
  static_assert(std::is_same_v<decltype(resolved({}).get(1s)), std::vector<int>>);
  auto kept = resolved({1});
  static_assert(std::is_same_v<decltype(kept.get()), const std::vector<int>&>);
  int sum = 0;
  for (int v : resolved({1, 2, 3}).get()) // the future is gone before the loop's body runs
    sum += v;
  CHECK(sum == 6);
  SECTION("moved out when nothing else shares the state, copied when a copy does") {
    am::promise<copy_counter> p;
    auto f = p.get_future();
    p.set_value(copy_counter({1, 2}));
    p = am::promise<copy_counter>(); // the writer goes
    {
      auto other = f;
      CHECK(std::move(other).get().copies == 1); // `f` still shares it: a copy
    }
    CHECK(f.get().values == std::vector<int>{1, 2});
    CHECK(std::move(f).get().copies == 0); // the last holder: moved
  }
  SECTION("errors and timeouts as on a kept future") {
    am::promise<int> p;
    p.set_error(std::make_exception_ptr(am::value_error("bad")));
    CHECK_THROWS_WITH(p.get_future().get(), "bad");
    am::promise<int> never;
    CHECK_THROWS_AS(never.get_future().get(1ms), am::timeout_error);
  }
}
