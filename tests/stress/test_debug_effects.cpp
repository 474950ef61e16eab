// Debug callbacks inside one jitted function called from several threads at once (AM_CPU_DEVICES:
// ctest runs this at 1, 8 and 64): every call's callback runs once per device with that call's own
// values, and each thread sees its calls in its own order on every device (its lane's order).
#include "support/stress.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace {

/// `threads` callers each make `calls` calls of one jitted function whose callback records
/// (thread, call) per device; returns the number of wrong or missing records.
int misordered_effects(int threads, int calls) {
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  const auto n = static_cast<std::int64_t>(devs.size());
  am::mesh m({n}, devs, {"x"});
  auto split = am::make_named_sharding(m, am::P("x"));
  std::mutex mutex;
  std::map<int, std::vector<int>> seen; // thread -> the call of each callback, in the order run
  auto f = am::jit([&](const am::array& who, const am::array& call) {
    am::debug_callback(
      [&](const am::host_array& thread_shard, const am::host_array& call_shard) {
        // One element per device: the shard says which thread and which of its calls.
        const auto t = thread_shard.to_vector<std::int32_t>().at(0);
        const auto c = call_shard.to_vector<std::int32_t>().at(0);
        std::lock_guard<std::mutex> guard(mutex);
        seen[t].push_back(c);
      },
      who, call);
    return call + 1;
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&, t] {
      auto who = am::device_put(am::host_array::from_vector(std::vector<std::int32_t>(static_cast<std::size_t>(n), t)), split);
      for (int c = 0; c < calls; ++c)
        f(who, am::device_put(am::host_array::from_vector(std::vector<std::int32_t>(static_cast<std::size_t>(n), c)), split));
      am::effects_barrier();
    });
  for (auto& c : callers)
    c.join();
  // A thread's lane runs its callbacks in the order issued: call 0 on every device, then call 1...
  int wrong = 0;
  for (int t = 0; t < threads; ++t) {
    const auto& got = seen[t];
    if (got.size() != static_cast<std::size_t>(calls * n)) {
      ++wrong;
      continue;
    }
    for (std::size_t k = 0; k < got.size(); ++k)
      wrong += got[k] != static_cast<int>(k / static_cast<std::size_t>(n)) ? 1 : 0;
  }
  return wrong;
}

} // namespace

TEST_CASE("debug callbacks of concurrent callers run once per device, in each caller's order", "[stress][debugging]") {
  auto threads = GENERATE(1, 2, 4);
  INFO(threads << " threads");
  CHECK(misordered_effects(threads, am::test::scaled_by_devices(64, 4)) == 0);
}
