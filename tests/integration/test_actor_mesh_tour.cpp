// The actor mesh tour (demos/actor_mesh_tour.cpp) in one process and under `actormesh launch -n 4
// --cpu-devices 2`: the trainers converge on y = 3x + 1, the slice names its host's trainers, the
// faulting trainer is restarted by its policy, and across processes the killed process's actors
// are reported by every survivor, by the call's error and by supervision events.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

namespace {

std::string tour() { return am::testing::binary_dir() + "/demos/actor_mesh_tour"; }

bool has(const std::string& out, const std::string& line) { return out.find(line) != std::string::npos; }

} // namespace

TEST_CASE("actor mesh tour: in one process", "[integration][actor_mesh]") {
  REQUIRE(std::filesystem::exists(tour()));
  auto r = am::testing::run_command("env AM_CPU_DEVICES=4 " + tour(), 120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(has(r.output, "trainers {host: 1, device: 4}, one per device; the loader {loader: 1}\n"));
  CHECK(has(r.output, "step 39: loss 0.0000, w 3.0000, b 1.0000\n"));
  CHECK(has(r.output, "the loader served 40 batches\n"));
  CHECK(has(r.output, "host 0: trainer at {host: 0, device: 3} on CpuDevice(id=3) in process 0\n"));
  CHECK(has(r.output, "supervision: tour.trainer at {host: 0, device: 0} (process 0) restarted: am::actor_fault: "
                      "trainer 0 lost its optimizer state\n"));
  CHECK(has(r.output, "the call failed: actor_fault: trainer 0 lost its optimizer state\n"));
  CHECK(has(r.output, "after the restart it trains again: 32 (a fresh trainer's loss, w = b = 0)\n"));
  CHECK(has(r.output, "done\n"));
}

TEST_CASE("actor mesh tour: under actormesh launch -n 4 --cpu-devices 2 --keep-going", "[integration][actor_mesh]") {
  auto r = am::testing::run_command(
    am::testing::tool_path() + " launch -n 4 --cpu-devices 2 --keep-going -- " + tour(), 120);
  INFO(r.output);
  CHECK(r.status == 0); // the killed process was on purpose; the others end well
  CHECK(has(r.output, "actormesh launch: process 3 was killed by signal 9 (Killed); the other 3 processes go on"));
  CHECK(has(r.output, "actormesh launch: 3 of 4 processes ended well; process 3 failed (--keep-going)"));
  CHECK(has(r.output, "[0] step 39: loss 0.0000, w 3.0000, b 1.0000\n"));
  CHECK(has(r.output, "[0] host 3: trainer at {host: 3, device: 1} on CpuDevice(id=7) in process 3\n"));
  CHECK(has(r.output, "[3] supervision: tour.trainer at {host: 3, device: 0} (process 3) restarted: am::actor_fault: "
                      "trainer 6 lost its optimizer state\n"));
  CHECK(has(r.output, "[0] after the restart it trains again: 32"));
  for (int p = 0; p < 3; ++p) {
    auto tag = "[" + std::to_string(p) + "] ";
    CHECK(has(r.output, tag + "trainers {host: 4, device: 2}, one per device; the loader {loader: 1}\n"));
    CHECK(has(r.output, tag + "actor_failure_error: actor 'tour.trainer' at {host: 3, device: 0} (process 3) failed: "
                              "process 3"));
    CHECK(has(r.output, tag + "supervision: tour.trainer at {host: 3, device: 1} (process 3) failed: "));
    CHECK(has(r.output, tag + "done\n"));
  }
}
