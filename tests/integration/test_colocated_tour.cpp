// The colocated tour (demos/colocated_tour.cpp), run as a user runs it: alone, where the code runs in
// this process, and under `actormesh launch -n 2 --cpu-devices 1`, where process 0 controls and every
// colocated body and Adder runs in worker 1 (its lines carry the [1] prefix), with the seed's lines in
// both. (The demo is built with the rest; build colocated_tour first when building test targets alone.)
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>

namespace {

const std::string tour = am::testing::binary_dir() + "/demos/colocated_tour";

/// The seconds in "two 1-second calls from two threads: 1.00 s".
double concurrent_seconds(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("two 1-second calls from two threads: ([0-9.]+) s")))
    return -1;
  return std::stod(m[1]);
}

} // namespace

TEST_CASE("colocated: the colocated tour prints the seed's lines when run alone", "[integration][colocated]") {
  REQUIRE(std::filesystem::exists(tour));
  auto r = am::testing::run_command(tour, 60);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("[CpuDevice(id=0)]") != std::string::npos);
  CHECK(r.output.find("Array(1, dtype=int32)") != std::string::npos);
  CHECK(r.output.find("Array(2, dtype=int32)") != std::string::npos);
  auto created = r.output.find("Adder created");
  auto destroyed = r.output.find("Adder destroyed");
  CHECK(created != std::string::npos);
  CHECK(destroyed != std::string::npos);
  CHECK(created < destroyed);
  auto seconds = concurrent_seconds(r.output);
  CHECK(seconds > 0.9);
  CHECK(seconds < 1.8);
}

TEST_CASE("colocated: under actormesh launch the tour's code runs in worker 1", "[integration][colocated]") {
  REQUIRE(std::filesystem::exists(tour));
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 2 --cpu-devices 1 -- " + tour, 90);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("[0] controller: the tour runs on worker 1's CPU devices") != std::string::npos);
  CHECK(r.output.find("[0] [CpuDevice(id=1)]") != std::string::npos);
  CHECK(r.output.find("[0] Array(2, dtype=int32)") != std::string::npos);
  CHECK(r.output.find("[0] without devices: No devices found.") != std::string::npos);
  auto created = r.output.find("[1] Adder created");
  auto destroyed = r.output.find("[1] Adder destroyed");
  CHECK(created != std::string::npos);
  CHECK(destroyed != std::string::npos);
  CHECK(created < destroyed);
  CHECK(r.output.find("[0] Adder") == std::string::npos); // nothing of the object runs in the controller
  auto seconds = concurrent_seconds(r.output);
  CHECK(seconds > 0.9);
  CHECK(seconds < 1.8);
}
