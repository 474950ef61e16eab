// The future state under races, at several thread counts: resolvers racing each other, waiters
// with and without timeouts racing the resolution, callbacks registered while it happens, and the
// last promise dropped while others resolve. The state sleeps on a futex and guards its callback
// list with a spin lock (actors/detail/ready_word.hpp), so these check what the mutex and condition
// variable used to guarantee: one winner, every waiter wakes, every callback runs exactly once.
#include "actormesh/actors/future.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

/// Runs `body(t)` on `threads` threads and joins them.
template <class Body>
void on_threads(int threads, Body body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&body, t] { body(t); });
  for (auto& th : pool)
    th.join();
}

} // namespace

TEST_CASE("racing resolvers: exactly one wins and every waiter sees its value", "[future][race]") {
  const int threads = GENERATE(2, 8, 32);
  const int rounds = 200;
  for (int r = 0; r < rounds; ++r) {
    am::promise<int> p;
    auto f = p.get_future();
    std::atomic<int> winners{0};
    std::atomic<int> woken{0};
    std::atomic<int> callbacks{0};
    on_threads(threads, [&](int t) {
      if (t % 2 == 0) {
        if (p.set_value(t))
          winners.fetch_add(1);
      } else if (t % 4 == 1) {
        if (f.wait_for(5s))
          woken.fetch_add(1);
      } else {
        f.on_ready([&] { callbacks.fetch_add(1); });
        f.wait();
        woken.fetch_add(1);
      }
    });
    REQUIRE(winners.load() == 1);
    REQUIRE(woken.load() == threads / 2);
    REQUIRE(callbacks.load() == threads / 4); // threads with t % 4 == 3
    REQUIRE(f.get() % 2 == 0);
  }
}

TEST_CASE("a timed wait returns false on time when nothing resolves, and true once it does",
          "[future][race]") {
  const int threads = GENERATE(2, 8);
  am::promise<void> p;
  auto f = p.get_future();
  std::atomic<int> timed_out{0};
  auto start = std::chrono::steady_clock::now();
  on_threads(threads, [&](int) {
    if (!f.wait_for(30ms))
      timed_out.fetch_add(1);
  });
  CHECK(timed_out.load() == threads);
  CHECK(std::chrono::steady_clock::now() - start < 10s); // bounded: none sleeps on past its deadline
  std::thread late([&] {
    std::this_thread::sleep_for(20ms);
    p.set_value();
  });
  CHECK(f.wait_for(10s));
  late.join();
}

TEST_CASE("the last promise dropped while another copy resolves: one outcome, no lost wakeup",
          "[future][race]") {
  const int threads = GENERATE(2, 8);
  for (int r = 0; r < 300; ++r) {
    auto first = std::make_unique<am::promise<int>>();
    auto f = first->get_future();
    std::vector<std::unique_ptr<am::promise<int>>> copies;
    for (int t = 0; t < threads; ++t)
      copies.push_back(std::make_unique<am::promise<int>>(*first));
    first.reset();
    on_threads(threads, [&](int t) {
      if (t == 0)
        copies[static_cast<std::size_t>(t)]->set_value(7);
      copies[static_cast<std::size_t>(t)].reset(); // the last drop fails the state unless resolved
    });
    REQUIRE(f.wait_for(5s));
    bool failed = false;
    try {
      REQUIRE(f.get() == 7);
    } catch (const am::runtime_error&) {
      failed = true;
    }
    // Thread 0 resolves before it drops its own copy, so the value always wins.
    REQUIRE_FALSE(failed);
  }
}

TEST_CASE("callbacks registered from many threads during resolution each run exactly once",
          "[future][race]") {
  const int threads = GENERATE(2, 8, 32);
  for (int r = 0; r < 100; ++r) {
    am::promise<int> p;
    auto f = p.get_future();
    std::atomic<int> runs{0};
    on_threads(threads, [&](int t) {
      if (t == threads - 1) {
        p.set_value(1);
        return;
      }
      for (int k = 0; k < 10; ++k)
        f.on_ready([&] { runs.fetch_add(1); });
    });
    REQUIRE(runs.load() == (threads - 1) * 10);
  }
}
