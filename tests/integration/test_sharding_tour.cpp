// The sharding tour demo (seed 001) as a real process: `sharding_tour --quick` must pass all its own
// checks and print the seed's pictures, both as our CPU devices and relabelled as the seed's TPUs.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <string>

using am::testing::run_command;

namespace {

/// The demo's output, run once for every test case of this file.
const am::testing::command_result& tour_output() {
  static const auto result =
    run_command(am::testing::binary_dir() + "/demos/sharding_tour --quick --am-gpus=off", 300);
  return result;
}

/// How many times `needle` occurs in `text`.
std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

} // namespace

TEST_CASE("the sharding tour passes its checks and exits 0", "[integration][tour]") {
  const auto& r = tour_output();
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("8 CPU devices, arrays (1024, 1024) float32 (--quick)"));
  CHECK_THAT(r.output, Catch::Contains("all "));
  CHECK_THAT(r.output, Catch::Contains(" checks passed"));
  CHECK_THAT(r.output, !Catch::Contains("FAILED"));
  for (const char* section : {"==== 1. Introduction", "==== 2. Sharding basics", "==== 3. NamedSharding",
                              "==== 4. Computation follows", "==== 5. jit", "==== 6. Timing"})
    CHECK_THAT(r.output, Catch::Contains(section));
}

TEST_CASE("the sharding tour prints the seed's 4x2 picture as CPU and as TPU devices", "[integration][tour]") {
  const auto& r = tour_output();
  INFO(r.output);
  const std::string cpu = "┌──────────┬──────────┐\n"
                          "│  CPU 0   │  CPU 1   │\n"
                          "├──────────┼──────────┤\n"
                          "│  CPU 2   │  CPU 3   │\n"
                          "├──────────┼──────────┤\n"
                          "│  CPU 4   │  CPU 5   │\n"
                          "├──────────┼──────────┤\n"
                          "│  CPU 6   │  CPU 7   │\n"
                          "└──────────┴──────────┘\n";
  const std::string tpu = "┌──────────┬──────────┐\n"
                          "│  TPU 0   │  TPU 1   │\n"
                          "├──────────┼──────────┤\n"
                          "│  TPU 2   │  TPU 3   │\n"
                          "├──────────┼──────────┤\n"
                          "│  TPU 6   │  TPU 7   │\n"
                          "├──────────┼──────────┤\n"
                          "│  TPU 4   │  TPU 5   │\n"
                          "└──────────┴──────────┘\n";
  // y and z = sin(y) in section 1, y in section 2, P('a', 'b') in section 3, z in 4, jit in 5.
  CHECK(count(r.output, cpu) >= 6);
  CHECK(count(r.output, tpu) >= 6);
}

TEST_CASE("the sharding tour prints the seed's other pictures", "[integration][tour]") {
  const auto& r = tour_output();
  INFO(r.output);
  // x on one device.
  CHECK_THAT(r.output, Catch::Contains("│                       │\n"
                                       "│         TPU 0         │\n"
                                       "│                       │\n"));
  // reshape(8, 1) and P(('a', 'b'), None).
  CHECK(count(r.output, "├───────────────────────┤\n"
                        "│         TPU 6         │\n"
                        "├───────────────────────┤\n"
                        "│         TPU 7         │\n"
                        "├───────────────────────┤\n"
                        "│         TPU 4         │\n") == 2);
  // reshape(1, 8).
  CHECK_THAT(r.output, Catch::Contains("│ TPU 0 │ TPU 1 │ TPU 2 │ TPU 3 │ TPU 6 │ TPU 7 │ TPU 4 │ TPU 5 │\n"));
  CHECK_THAT(r.output, Catch::Contains("│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n"));
  // replicate(0) and P(None, 'b'); replicate(1) and P('a', None).
  CHECK(count(r.output, "│TPU 0,2,4,6│TPU 1,3,5,7│\n") == 2);
  CHECK(count(r.output, "│        TPU 6,7        │\n") == 2);
  CHECK_THAT(r.output, Catch::Contains("│CPU 0,2,4,6│CPU 1,3,5,7│\n"));
  // P('b', 'a') and P(None, 'a').
  CHECK_THAT(r.output, Catch::Contains("│ TPU 0 │ TPU 2 │ TPU 6 │ TPU 4 │\n"));
  CHECK_THAT(r.output, Catch::Contains("│ TPU 1 │ TPU 3 │ TPU 7 │ TPU 5 │\n"));
  CHECK_THAT(r.output, Catch::Contains("│TPU 0,1│TPU 2,3│TPU 6,7│TPU 4,5│\n"));
  // P(): one cell, every device.
  CHECK_THAT(r.output, Catch::Contains("│  CPU 0,1,2,3,4,5,6,7  │\n"));
}

TEST_CASE("the sharding tour prints the PositionalSharding reprs and the timing table", "[integration][tour]") {
  const auto& r = tour_output();
  INFO(r.output);
  CHECK_THAT(r.output, Catch::Contains("PositionalSharding([{CPU 0} {CPU 1} {CPU 2} {CPU 3} {CPU 4} {CPU 5} {CPU 6} {CPU 7}])"));
  CHECK_THAT(r.output, Catch::Contains("PositionalSharding([[{CPU 0, 2, 4, 6} {CPU 1, 3, 5, 7}]])"));
  CHECK_THAT(r.output, Catch::Contains("(1, 2) (4, 1)"));
  CHECK_THAT(r.output, Catch::Contains("replica_id 1"));
  CHECK_THAT(r.output, Catch::Contains("eager"));
  CHECK_THAT(r.output, Catch::Contains("jit"));
}
