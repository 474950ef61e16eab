// A thread's direct host lane (devices/calls.cpp: asked once from the host actor, then used
// straight) under hostile use: runtimes stopped and started again from the same threads, calls
// after a stop, and many threads making their first call at once, each keeping its order.
#include "support/stress.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST_CASE("host lanes: the same threads through 10 runtimes, calls after each stop refused", "[stress][colocated]") {
  for (int round = 0; round < 10; ++round) {
    am::runtime rt(am::test::stress_options());
    std::vector<std::thread> threads;
    std::atomic<int> out_of_order{0};
    std::atomic<int> refused{0};
    std::vector<std::vector<int>> seen(4);
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        std::vector<am::future<void>> done;
        for (int i = 0; i < 50; ++i)
          done.push_back(am::host_call([&seen, t, i] { seen[static_cast<std::size_t>(t)].push_back(i); }));
        for (auto& f : done)
          f.get(30s);
        for (int i = 0; i < 50; ++i)
          if (seen[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] != i)
            ++out_of_order;
      });
    for (auto& th : threads)
      th.join();
    CHECK(out_of_order == 0);
    rt.stop();
    // This thread's lane (cached for the stopped runtime) refuses instead of hanging.
    try {
      am::host_call([] {}).get(30s);
    } catch (const am::runtime_error&) {
      ++refused;
    } catch (const am::error&) {
      ++refused; // no current runtime
    }
    CHECK(refused == 1);
  }
}

TEST_CASE("host lanes: 32 threads making their first call at once each keep their order", "[stress][colocated]") {
  am::runtime rt(am::test::stress_options());
  constexpr int threads_count = 32;
  constexpr int calls = 100;
  std::vector<std::vector<int>> seen(threads_count);
  std::atomic<int> ready{0};
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_count; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      auto deadline = std::chrono::steady_clock::now() + 10s;
      while (ready < threads_count && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      std::vector<am::future<void>> done;
      for (int i = 0; i < calls; ++i)
        done.push_back(am::host_call([&seen, t, i] { seen[static_cast<std::size_t>(t)].push_back(i); }));
      for (auto& f : done)
        f.get(60s);
      auto& mine = seen[static_cast<std::size_t>(t)];
      if (mine.size() != static_cast<std::size_t>(calls))
        ++out_of_order;
      for (std::size_t i = 0; i < mine.size(); ++i)
        if (mine[i] != static_cast<int>(i))
          ++out_of_order;
    });
  for (auto& th : threads)
    th.join();
  CHECK(out_of_order == 0);
}
