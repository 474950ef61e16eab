// Colocated calls under load (Taskflow style: the same body at 1, 4 and 16 threads, each case with
// its own ctest timeout; the device count comes from AM_CPU_DEVICES, which ctest sets to 1, 8 and
// 64). Every thread mixes asynchronous colocated function calls, method calls on its own object
// and on one object all threads share, and array operations, then checks that everything ran in
// its issue order and that every instance was created once per device set and destroyed.
#include "support/stress.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace std::chrono_literals;

namespace {

constexpr int calls_per_thread = 400;

std::mutex logs_mutex;
std::vector<std::vector<int>> function_logs; // per thread: the values the function saw, in order

/// Appends (thread, value) to that thread's log; x holds thread * 1'000'000 + value.
const auto record = am::colocated_python("stress.record", [](const am::array& x) {
  int v = x.to_host().item<int>();
  std::lock_guard<std::mutex> guard(logs_mutex);
  function_logs.at(static_cast<std::size_t>(v / 1000000)).push_back(v % 1000000);
  return x;
});

std::atomic<int> created{0};
std::atomic<int> destroyed{0};

/// Counts the calls it gets: a call's result is its position among the instance's calls.
struct tally {
  tally() { ++created; }
  ~tally() { ++destroyed; }
  tally(const tally&) = delete;
  tally& operator=(const tally&) = delete;
  am::array next(const am::array& x) { return x * 0 + ++count; }
  int count = 0;
};

const auto tally_class = am::colocated_python_class<tally>("stress.tally").def("next", &tally::next);

am::spec_tree same_as_first(const am::spec_tree& in) { return in[0]; }

struct outcome {
  int violations = 0;
  int errors = 0;
};

outcome run_mix(int threads) {
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  function_logs.assign(static_cast<std::size_t>(threads), {});
  created = 0;
  destroyed = 0;
  std::atomic<int> violations{0};
  std::atomic<int> errors{0};
  std::set<int> shared_device_sets;
  {
    auto shared = tally_class();
    auto shared_next = shared.method<am::array(am::array)>("next").specialize({.out_specs_fn = same_as_first});
    auto rec = record.specialize({.out_specs_fn = same_as_first});
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      auto& dev = devs[static_cast<std::size_t>(t) % devs.size()];
      shared_device_sets.insert(dev.id);
      workers.emplace_back([&, t, dev] {
        try {
          auto own = tally_class();
          auto own_next = own.method<am::array(am::array)>("next"); // the first call learns its specs
          am::mesh m({1}, {dev}, {"x"});
          auto s = am::make_named_sharding(m, am::P());
          std::vector<am::array> own_counts;
          std::vector<am::array> shared_counts;
          std::vector<am::array> sums;
          auto acc = am::device_put(am::host_array::scalar(0), s);
          for (int i = 0; i < calls_per_thread; ++i) {
            auto x = am::device_put(am::host_array::scalar(t * 1000000 + i), s);
            rec(x);
            own_counts.push_back(own_next(x));
            shared_counts.push_back(shared_next(x));
            acc = acc + 1;
            sums.push_back(acc);
          }
          for (int i = 0; i < calls_per_thread; ++i) {
            auto k = static_cast<std::size_t>(i);
            if (own_counts[k].to_host().item<int>() != i + 1)
              ++violations; // this thread's calls reached its instance out of order
            if (sums[k].to_host().item<int>() != i + 1)
              ++violations;
          }
          int last = 0;
          for (auto& c : shared_counts) { // the shared instance interleaves threads, in each one's order
            int v = c.to_host().item<int>();
            if (v <= last)
              ++violations;
            last = v;
          }
        } catch (const std::exception& e) {
          UNSCOPED_INFO("thread " << t << ": " << e.what());
          ++errors;
        }
      });
    }
    for (auto& w : workers)
      w.join();
  }
  for (std::size_t t = 0; t < function_logs.size(); ++t) {
    auto& log = function_logs[t];
    if (log.size() != static_cast<std::size_t>(calls_per_thread))
      ++errors;
    for (std::size_t i = 0; i < log.size(); ++i)
      if (log[i] != static_cast<int>(i))
        ++violations;
  }
  int instances = threads + static_cast<int>(shared_device_sets.size());
  for (int i = 0; i < 60000 && destroyed < instances; ++i) // destruction is asynchronous
    std::this_thread::sleep_for(1ms);
  if (created != instances || destroyed != instances) {
    UNSCOPED_INFO("instances: expected " << instances << ", created " << created << ", destroyed " << destroyed);
    ++errors;
  }
  return {violations.load(), errors.load()};
}

} // namespace

#define AM_COLOCATED_STRESS_CASE(N)                                                                  \
  TEST_CASE("colocated calls, objects and array operations keep order with " #N " threads",         \
            "[stress][colocated]") {                                                                 \
    auto result = run_mix(N);                                                                        \
    CHECK(result.violations == 0);                                                                   \
    CHECK(result.errors == 0);                                                                       \
  }

AM_COLOCATED_STRESS_CASE(1)
AM_COLOCATED_STRESS_CASE(4)
AM_COLOCATED_STRESS_CASE(16)
