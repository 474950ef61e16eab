// Colocated objects let go of by many threads at once (AM_CPU_DEVICES: ctest runs this at 1, 8 and
// 64): each thread's object is destroyed, after its calls, before that thread's next colocated call
// returns, whatever the other threads do meanwhile.
#include "support/stress.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {

/// An instance that says, through a flag its creator holds, that it is gone and how many calls
/// it ran first.
struct tracked {
  explicit tracked(std::shared_ptr<std::atomic<int>> calls_at_end) : calls_at_end(std::move(calls_at_end)) {}
  ~tracked() { calls_at_end->store(calls); }
  am::array touch(const am::array& x) {
    ++calls;
    return x;
  }
  std::shared_ptr<std::atomic<int>> calls_at_end;
  int calls = 0;
};

const auto tracked_class = am::colocated_python_class<tracked>("stress.tracked").def("touch", &tracked::touch);

const auto identity = am::colocated_python("stress.destruction.identity", [](const am::array& x) { return x; });

/// `threads` threads each make `rounds` objects, call each `calls` times asynchronously, let go of
/// it and make one more colocated call; returns the rounds whose object was not yet gone (or had
/// not run every call) when that call returned.
int late_destructions(int threads, int rounds, int calls) {
  am::runtime rt(am::test::stress_options());
  std::atomic<int> late{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      const auto& devs = am::devices();
      auto x = am::device_put(am::host_array::scalar(t), devs[static_cast<std::size_t>(t) % devs.size()]);
      for (int r = 0; r < rounds; ++r) {
        auto end = std::make_shared<std::atomic<int>>(-1);
        {
          auto object = tracked_class(end);
          auto touch = object.method(&tracked::touch).specialize({.out_specs_fn = [](const am::spec_tree& in) { return in[0]; }});
          for (int c = 0; c < calls; ++c)
            touch(x);
        }
        identity(x);
        if (end->load() != calls)
          ++late;
      }
    });
  for (auto& w : workers)
    w.join();
  return late.load();
}

} // namespace

TEST_CASE("objects let go of by many threads are gone before each thread's next call", "[stress][colocated]") {
  auto threads = GENERATE(1, 4, 8);
  INFO(threads << " threads");
  CHECK(late_destructions(threads, am::test::scaled_by_devices(40, 5), 3) == 0);
}
