// The programs users run, as real processes: the main demo and `actormesh info`.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

using am::testing::run_command;

TEST_CASE("the main demo lists 8 CPU devices and keeps every thread's order", "[integration]") {
  auto r = run_command(am::testing::binary_dir() + "/demos/hello --am-gpus=off --threads 8");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("8 devices:"));
  CHECK_THAT(r.output, Catch::Contains("CpuDevice(id=7)"));
  CHECK_THAT(r.output, Catch::Contains("all in order"));
}

TEST_CASE("the demo honours AM_CPU_DEVICES and the flag that overrides it", "[integration]") {
  auto r = run_command("env AM_CPU_DEVICES=3 " + am::testing::binary_dir() + "/demos/hello --am-gpus=off");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("3 devices:"));
  auto f = run_command("env AM_CPU_DEVICES=3 " + am::testing::binary_dir()
                       + "/demos/hello --am-gpus=off --am-cpu-devices=5");
  CHECK_THAT(f.output, Catch::Contains("5 devices:"));
}

TEST_CASE("a bad option value exits with a clear error", "[integration]") {
  auto r = run_command("env AM_CPU_DEVICES=many " + am::testing::binary_dir() + "/demos/hello");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("AM_CPU_DEVICES='many' is not an integer >= 1"));
}

TEST_CASE("actormesh info prints the build, the devices and why GPUs are absent", "[integration]") {
  auto r = run_command(am::testing::tool_path() + " info");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("CAF    0.17"));
  CHECK_THAT(r.output, Catch::Contains("CpuDevice(id=0)"));
  CHECK_THAT(r.output, Catch::Contains("CUDA"));
  bool has_gpus = r.output.find("CudaDevice(id=") != std::string::npos;
  if (!has_gpus)
    CHECK_THAT(r.output, Catch::Contains("GPUs: none, using CPU devices only. Why: "));
}
