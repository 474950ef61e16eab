// The process's BLAS calls (devices/cpu/blas_thread.hpp): one at a time however many threads make
// them, each exactly once, large and small, their exceptions back to their callers, and a call
// made from inside a call runs at once (no wait on itself).
#include "devices/cpu/blas_thread.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using am::detail::run_on_blas_thread;

namespace {

constexpr double large = 1e9; // goes through the BLAS thread when others wait
constexpr double small = 1e3; // may run on its caller's thread

} // namespace

TEST_CASE("BLAS calls from many threads run one at a time, each once", "[blas]") {
  for (int threads : {1, 4, 16}) {
    INFO(threads << " threads");
    std::atomic<int> running{0}, overlaps{0}, runs{0};
    std::vector<std::thread> callers;
    const int per_thread = 200;
    for (int t = 0; t < threads; ++t)
      callers.emplace_back([&, t] {
        for (int k = 0; k < per_thread; ++k)
          run_on_blas_thread(
            [&] {
              if (running.fetch_add(1) != 0)
                overlaps.fetch_add(1);
              std::this_thread::sleep_for(std::chrono::microseconds(20));
              runs.fetch_add(1);
              running.fetch_sub(1);
            },
            (t + k) % 2 ? large : small);
      });
    for (auto& c : callers)
      c.join();
    CHECK(overlaps.load() == 0);
    CHECK(runs.load() == threads * per_thread);
  }
}

TEST_CASE("a BLAS call's exception reaches its caller, and the next calls still run", "[blas]") {
  for (double flop : {small, large}) {
    CHECK_THROWS_WITH(run_on_blas_thread([] { throw std::runtime_error("bad product"); }, flop), "bad product");
    int ran = 0;
    run_on_blas_thread([&] { ++ran; }, flop);
    CHECK(ran == 1);
  }
}

TEST_CASE("a BLAS call made from inside one runs at once", "[blas]") {
  // Several threads keep the BLAS thread contended, so that large calls go through it.
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int t = 0; t < 3; ++t)
    load.emplace_back([&] {
      while (!stop.load())
        run_on_blas_thread([] { std::this_thread::sleep_for(std::chrono::microseconds(50)); }, large);
    });
  int inner = 0;
  for (int k = 0; k < 50; ++k)
    run_on_blas_thread([&] { run_on_blas_thread([&] { ++inner; }, large); }, large);
  stop.store(true);
  for (auto& t : load)
    t.join();
  CHECK(inner == 50);
}
