// Inputs that become ready while a device is deciding whether to wait for them: calls whose input
// is a future another thread resolves at the same moment, at several thread counts. (A device that
// looked at such an input twice once saw it pending, then ready, and crashed.) The device count comes
// from the environment (AM_CPU_DEVICES; ctest runs this at 1, 8 and 64 devices).
#include "support/programs.hpp"
#include "support/stress.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace std::chrono_literals;

namespace {

/// `threads` callers each race about `races` inputs: rounds of one call on every device whose input
/// a resolver thread sets concurrently (races / devices rounds, so 64 devices take no longer than 4
/// did); returns the number of wrong results.
int racing_inputs(int threads, int races) {
  const int rounds = am::test::scaled_by_devices(races);
  am::runtime rt(am::test::stress_options());
  auto devs = am::devices();
  auto prog = am::testing::step_program(1);
  auto base = am::upload(devs[0], am::testing::to_bytes(std::vector<std::int64_t>(4, 2)), {am::dtype::int64, {4}});
  auto ready = base.get(30s);
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        std::vector<am::promise<am::buffer_ref>> gates(devs.size());
        std::vector<am::shard_future> outs;
        for (std::size_t k = 0; k < devs.size(); ++k)
          outs.push_back(am::execute(devs[k], prog, {gates[k].get_future()})[0]);
        std::thread resolver([&] {
          for (auto& g : gates)
            g.set_value(ready);
        });
        for (std::size_t k = 0; k < devs.size(); ++k) {
          auto got = am::testing::from_bytes<std::int64_t>(am::fetch(devs[k], outs[k]).get(60s));
          if (got != std::vector<std::int64_t>(4, am::testing::expected_chain(2, 1, 1)))
            ++wrong;
        }
        resolver.join();
      }
    });
  for (auto& c : callers)
    c.join();
  return wrong.load();
}

} // namespace

TEST_CASE("inputs resolved while devices drain, 1 thread", "[stress][inputs]") {
  CHECK(racing_inputs(1, 1200) == 0);
}

TEST_CASE("inputs resolved while devices drain, 4 threads", "[stress][inputs]") {
  CHECK(racing_inputs(4, 600) == 0);
}

TEST_CASE("inputs resolved while devices drain, 8 threads", "[stress][inputs]") {
  CHECK(racing_inputs(8, 320) == 0);
}
