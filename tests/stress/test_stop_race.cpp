// Stopping the runtime while calls are in flight and queued. The rules (doc/runtime.md,
// "Stopping"): every call completes with its value or fails with am::runtime_error; calls still
// queued fail instead of running; a thread blocked in to_host wakes with the error; stop() returns
// once the actors are gone, on the thread that called it. Device count from the environment
// (support/stress.hpp).
#include "support/arrays.hpp"
#include "support/stress.hpp"
#include "support/watchdog.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <string>
#include <thread>

using namespace std::chrono_literals;

namespace {

/// `data` on every device: rows split over the devices when asked and when they divide evenly,
/// else a copy on each.
am::array over_devices(const am::host_array& data, bool split_rows) {
  auto devs = am::devices();
  const auto n = static_cast<std::int64_t>(devs.size());
  am::mesh m(am::create_device_mesh({n}, devs), {"x"});
  bool split = split_rows && data.shape()[0] % n == 0;
  return am::device_put(data, am::make_named_sharding(m, split ? am::P("x") : am::P()));
}

/// A (rows, cols) float32 array of ones, rows split over the devices.
am::array ones_over_devices(std::int64_t rows, std::int64_t cols) {
  return over_devices(am::host_array::ones({rows, cols}, am::dtype::float32), true);
}

struct outcome_counts {
  std::atomic<long> completed{0};
  std::atomic<long> failed{0};      ///< am::runtime_error, as the stop rules promise
  std::atomic<long> wrong{0};       ///< a value that is not the right one
  std::atomic<long> unexpected{0};  ///< any other exception
};

/// `threads` callers loop on sin or matmul plus to_host; the main thread stops the runtime after
/// `delay`. Returns how long stop() took.
std::chrono::milliseconds stop_during_calls(int threads, std::chrono::milliseconds delay, outcome_counts& counts) {
  am::runtime rt(am::test::stress_options());
  auto x = ones_over_devices(64, 64);
  const std::vector<double> sin_one(64 * 64, std::sin(1.0f));
  const std::vector<double> sixty_four(64 * 64, 64.0);
  std::atomic<int> started{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&, t] {
      ++started;
      for (int k = 0; k < 400; ++k) {
        try {
          bool use_sin = (t + k) % 2 == 0;
          auto got = am::testing::values(use_sin ? am::sin(x).to_host() : am::matmul(x, x).to_host());
          if (am::testing::all_close(got, use_sin ? sin_one : sixty_four))
            ++counts.completed;
          else
            ++counts.wrong;
        } catch (const am::runtime_error&) {
          ++counts.failed;
          return; // the runtime is gone: every later call fails the same way
        } catch (...) {
          ++counts.unexpected;
          return;
        }
      }
    });
  while (started.load() < threads)
    std::this_thread::yield();
  std::this_thread::sleep_for(delay);
  auto begin = std::chrono::steady_clock::now();
  rt.stop();
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin);
  CHECK_FALSE(am::is_running());
  for (auto& c : callers)
    c.join();
  return took;
}

} // namespace

TEST_CASE("operations race stop(): each completes or fails with runtime_error", "[stress][stop]") {
  am::test::run_bounded("operations racing stop()", 240s, [] {
    std::mt19937 rng(7);
    for (int threads : {1, 8, 16}) {
      for (int round = 0; round < 4; ++round) {
        outcome_counts counts;
        auto took = stop_during_calls(threads, std::chrono::milliseconds(rng() % 40), counts);
        INFO(threads << " threads, round " << round << ": stop() took " << took.count() << " ms, "
                     << counts.completed << " completed, " << counts.failed << " failed");
        CHECK(counts.wrong == 0);
        CHECK(counts.unexpected == 0);
        CHECK(took < 60s); // a hang check, not a speed check: stop() waits for running calls only
      }
    }
    // The old runtime is fully gone: a new one starts and works in the same process.
    am::runtime again(am::test::stress_options());
    CHECK(am::testing::values(am::sum(ones_over_devices(8, 8)).to_host()) == std::vector<double>{64.0});
  });
}

TEST_CASE("stop() fails queued calls instead of running them", "[stress][stop]") {
  am::test::run_bounded("queued calls at stop()", 240s, [] {
    am::runtime rt(am::test::stress_options());
    // On every device, a chain of 200 products of 256x256 matrices queued at once: seconds of work
    // per device, far more than stop() may wait for.
    constexpr int length = 200;
    std::vector<std::vector<am::array>> chains;
    for (auto& d : am::devices()) {
      auto x = am::device_put(am::host_array::ones({256, 256}, am::dtype::float32), d);
      auto y = am::device_put(am::host_array::zeros({256, 256}, am::dtype::float32), d);
      std::vector<am::array> chain;
      for (int k = 0; k < length; ++k)
        chain.push_back(am::matmul(k == 0 ? x : chain.back(), y));
      chains.push_back(std::move(chain));
    }
    std::atomic<int> blocked_outcome{0}; // 1: value, 2: runtime_error, 3: other
    std::thread waiter([&] {
      try {
        chains[0].back().to_host();
        blocked_outcome = 1;
      } catch (const am::runtime_error&) {
        blocked_outcome = 2;
      } catch (...) {
        blocked_outcome = 3;
      }
    });
    std::this_thread::sleep_for(20ms);
    rt.stop();
    waiter.join();
    long ran = 0, failed = 0, other = 0;
    for (auto& chain : chains)
      for (auto& product : chain) {
        try {
          product.block_until_ready();
          ++ran;
        } catch (const am::runtime_error&) {
          ++failed;
        } catch (...) {
          ++other;
        }
      }
    INFO(ran << " products ran, " << failed << " failed");
    CHECK(blocked_outcome == 2);
    CHECK(failed > 0);
    CHECK(other == 0);
    CHECK(ran + failed == length * static_cast<long>(chains.size()));
  });
}

TEST_CASE("host tasks race stop(): each runs or fails with runtime_error", "[stress][stop]") {
  am::test::run_bounded("host tasks racing stop()", 120s, [] {
    for (int threads : {1, 4, 16}) {
      am::runtime rt(am::test::stress_options());
      std::atomic<long> ran{0}, failed{0}, other{0};
      std::vector<std::thread> callers;
      for (int t = 0; t < threads; ++t)
        callers.emplace_back([&] {
          std::vector<am::future<int>> results;
          try {
            for (int k = 0; k < 200; ++k)
              results.push_back(am::host_call([k] {
                std::this_thread::sleep_for(100us);
                return k;
              }));
          } catch (const am::runtime_error&) {
            // refused: the runtime stopped while this thread was still issuing
          }
          for (std::size_t k = 0; k < results.size(); ++k) {
            try {
              if (results[k].get() == static_cast<int>(k))
                ++ran;
              else
                ++other;
            } catch (const am::runtime_error&) {
              ++failed;
            } catch (...) {
              ++other;
            }
          }
        });
      std::this_thread::sleep_for(5ms);
      rt.stop();
      for (auto& c : callers)
        c.join();
      INFO(threads << " threads: " << ran << " tasks ran, " << failed << " failed");
      CHECK(other == 0);
    }
  });
}

TEST_CASE("stop() from several threads at once returns on each", "[stress][stop]") {
  am::test::run_bounded("concurrent stop()", 120s, [] {
    am::runtime rt(am::test::stress_options());
    auto x = ones_over_devices(64, 64);
    auto y = am::sin(x);
    std::vector<std::thread> stoppers;
    for (int t = 0; t < 4; ++t)
      stoppers.emplace_back([&] { rt.stop(); });
    for (auto& s : stoppers)
      s.join();
    CHECK_FALSE(am::is_running());
    CHECK_THROWS_AS(am::sin(x), am::runtime_error);
  });
}
