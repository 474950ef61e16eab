// Colocated calls under load: the mix of `actormesh stress` (tools/stress_mix.hpp) at 1, 4 and 16
// threads, each case with its own ctest timeout; the device count comes from AM_CPU_DEVICES, which
// ctest sets to 1, 8 and 64. Every thread mixes asynchronous colocated function calls, method calls
// on its own object and on one object all threads share, and array operations; the mix checks that
// everything ran in its issue order and that every instance was created once per device set and
// destroyed.
#include "support/stress.hpp"
#include "tools/stress_mix.hpp"

#include <catch2/catch.hpp>

namespace {

am::tools::stress_report run_mix(int threads, int calls, int window) {
  am::runtime rt(am::test::stress_options());
  am::tools::stress_config config;
  config.threads = threads;
  config.calls = calls;
  config.window = window;
  auto report = am::tools::run_stress_mix(config);
  for (auto& m : report.messages)
    UNSCOPED_INFO(m);
  return report;
}

} // namespace

#define AM_COLOCATED_STRESS_CASE(N)                                                                  \
  TEST_CASE("colocated calls, objects and array operations keep order with " #N " threads",         \
            "[stress][colocated]") {                                                                 \
    auto result = run_mix(N, 400, 8);                                                                \
    CHECK(result.rounds == N * 400);                                                                 \
    CHECK(result.calls == N * 400 * 4);                                                              \
    CHECK(result.violations == 0);                                                                   \
    CHECK(result.errors == 0);                                                                       \
  }

AM_COLOCATED_STRESS_CASE(1)
AM_COLOCATED_STRESS_CASE(4)
AM_COLOCATED_STRESS_CASE(16)

TEST_CASE("colocated mix with every round waited for, and with hundreds of rounds in flight",
          "[stress][colocated]") {
  for (int window : {1, 512}) {
    INFO("window " << window);
    auto result = run_mix(4, 300, window);
    CHECK(result.rounds == 4 * 300);
    CHECK(result.violations == 0);
    CHECK(result.errors == 0);
  }
}

TEST_CASE("a second stress run while one is in progress is refused, not interleaved", "[stress][colocated]") {
  am::runtime rt(am::test::stress_options());
  am::tools::stress_config config;
  config.threads = 2;
  config.calls = 50;
  bool refused = false;
  std::string message;
  auto report = am::tools::run_stress_mix(config, [&](std::int64_t, std::int64_t) {
    if (refused)
      return;
    try {
      am::tools::run_stress_mix(config);
    } catch (const am::runtime_error& e) {
      refused = true;
      message = e.what();
    }
  });
  CHECK(refused);
  CHECK(message.find("another stress run is in progress") != std::string::npos);
  CHECK(report.violations == 0);
  CHECK(report.errors == 0);
}

TEST_CASE("stress configurations out of range are refused with the field's name", "[stress][colocated]") {
  am::tools::stress_config c;
  c.threads = 0;
  CHECK_THROWS_WITH(am::tools::check_stress_config(c), Catch::Contains("--threads must be 1..1024"));
  c.threads = 2;
  c.calls = 1000000;
  CHECK_THROWS_WITH(am::tools::check_stress_config(c), Catch::Contains("--calls must be 1..999999"));
  c.calls = 10;
  c.colocated = c.arrays = false;
  CHECK_THROWS_WITH(am::tools::check_stress_config(c), Catch::Contains("the mix is empty"));
}
