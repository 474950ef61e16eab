// CUDA device actors: run only where a GPU is usable; elsewhere each case reports itself skipped
// (ctest shows "Skipped" through the return code 4) with the reason discovery gave.
#include "support/programs.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

using namespace std::chrono_literals;
using am::testing::from_bytes;
using am::testing::to_bytes;

namespace {

/// Exits with ctest's skip code when this machine has no usable GPU, printing why.
void require_gpu() {
  auto report = am::discover_gpus(true);
  if (report.count > 0)
    return;
  std::printf("SKIPPED: no usable GPU: %s\n", report.reason.c_str());
  std::fflush(stdout);
  std::_Exit(4);
}

} // namespace

TEST_CASE("CUDA devices are found and are the default platform", "[gpu]") {
  require_gpu();
  am::runtime rt;
  auto gpus = am::devices(am::platform::cuda);
  REQUIRE_FALSE(gpus.empty());
  CHECK(am::default_platform() == am::platform::cuda);
  CHECK(am::to_string(gpus[0]).rfind("CudaDevice(id=", 0) == 0);
  CHECK(gpus[0].id == rt.config().cpu_devices);
}

TEST_CASE("a program runs on a CUDA device and agrees with the host", "[gpu]") {
  require_gpu();
  am::runtime rt;
  auto d = am::devices(am::platform::cuda)[0];
  am::value_type t{am::dtype::float32, {1000}};
  am::program_builder b("gpu_axpy");
  auto x = b.parameter(t);
  b.output(b.binary(am::opcode::add, b.binary(am::opcode::multiply, x, b.constant(2, t)),
                    b.unary(am::opcode::neg, b.constant(1, t))));
  std::vector<float> in(1000), expected(1000);
  for (int i = 0; i < 1000; ++i) {
    in[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f;
    expected[static_cast<std::size_t>(i)] = in[static_cast<std::size_t>(i)] * 2 - 1;
  }
  auto xs = am::upload(d, to_bytes(in), t);
  auto out = am::execute(d, b.build(), {xs})[0];
  CHECK(from_bytes<float>(am::fetch(d, out).get(30s)) == expected);
}

TEST_CASE("CUDA lanes keep each caller's order", "[gpu]") {
  require_gpu();
  am::runtime rt;
  auto d = am::devices(am::platform::cuda)[0];
  auto x = am::upload(d, to_bytes(std::vector<std::int64_t>(4, 7)), {am::dtype::int64, {4}});
  for (int s = 0; s < 100; ++s)
    x = am::execute(d, am::testing::step_program(s), {x})[0];
  CHECK(from_bytes<std::int64_t>(am::fetch(d, x).get(30s))
        == std::vector<std::int64_t>(4, am::testing::expected_chain(7, 0, 100)));
}
