// The multihost tour under `actormesh launch -n 4 --cpu-devices 2`: the seed's examples with
// their printed results on every process, one agreed preemption sync point with a checked
// checkpoint, and the survivors of a killed process naming exactly its devices. The tour kills
// that process on purpose: with --keep-going the survivors end well and so does the launch. (The demo is built with the rest; the
// integration folder's dependencies list only cluster_tour, so build multihost_tour first when
// building test targets alone.)
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

TEST_CASE("multihost: the multihost tour runs under actormesh launch -n 4 --cpu-devices 2", "[integration][multihost]") {
  const auto tour = am::testing::binary_dir() + "/demos/multihost_tour";
  REQUIRE(std::filesystem::exists(tour));
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 4 --cpu-devices 2 --keep-going -- " + tour,
                                    120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("actormesh launch: process 3 was killed by signal 9 (Killed); the other 3 processes go on "
                      "(--keep-going)")
        != std::string::npos);
  CHECK(r.output.find("actormesh launch: 3 of 4 processes ended well; process 3 failed (--keep-going)")
        != std::string::npos);
  const std::string everywhere[] = {
      "sync_global_devices('data_ready'): all 4 processes arrived",
      "assert_equal(np.arange(4)): the same on every process",
      "a tree (x, x): ([0 1 2 3], [0 1 2 3])",
      "uint8 stays uint8: [0 1 2 3]",
      "stacked (tiled=False): shape (4, 4) [[ 0  1  2  3] [ 4  5  6  7] [ 8  9 10 11] [12 13 14 15]]",
      "concatenated (tiled=True): shape (16,) [ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15]",
      "a scalar is stacked: shape (4,) [0 1 2 3]",
      "np.arange(4) * host_id over Mesh(devices, 'x'), P('x'): global shape (16,), value [0 0 0 0 0 1 2 3 0 2 4 6 0 "
      "3 6 9]",
      "np.arange(4) with P(): global shape (4,), replicated everywhere: [0 1 2 3]",
      "pspecs=None: ValueError: `None` is not a valid input to the pspecs argument. Please use PartitionSpec() if you "
      "wanted to replicate your input.",
      "live devices: 8 of 8"};
  for (int p = 0; p < 4; ++p) {
    const auto tag = "[" + std::to_string(p) + "] ";
    for (auto& line : everywhere) {
      INFO(tag << line);
      CHECK(r.output.find(tag + line + "\n") != std::string::npos);
    }
    CHECK(r.output.find(tag + "input np.arange(4) + process_index * 4: ") != std::string::npos);
    CHECK(r.output.find(tag + "assert_equal(process_index): AssertionError: process ids differ. Expected: [0 1 2 "
                              "3]; got: ["
                        + std::to_string(p) + "].")
          != std::string::npos);
    // Resharded to P('x') first, then this process's rows: 4p .. 4p+3 as a (2, 2) float32 array.
    std::string rows = am::to_string(am::host_array::arange(4.0 * p, 4.0 * p + 4, 1, am::dtype::float32).reshape({2, 2}));
    rows.erase(std::remove(rows.begin(), rows.end(), '\n'), rows.end());
    CHECK(r.output.find(tag + "global (8, 2) sharded P('x', 'y') -> host-local with P('x'): shape (2, 2) " + rows + "\n")
          != std::string::npos);
  }
  // One sync point, the same on every process, after the signal at step 3; its checkpoint checked.
  std::set<std::string> points;
  std::regex point(R"(\[(\d)\] preemption sync point at step (\d+))");
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), point), end; it != end; ++it)
    points.insert((*it)[2]);
  CHECK(points.size() == 1);
  REQUIRE_FALSE(points.empty());
  CHECK(std::stoi(*points.begin()) > 3);
  for (int p = 0; p < 4; ++p)
    CHECK(r.output.find("[" + std::to_string(p) + "] restored the checkpoint of step " + *points.begin()
                        + " onto P(): 16 elements, all " + *points.begin() + ": ok")
          != std::string::npos);
  // The survivors name exactly the killed process's devices.
  for (int p = 0; p < 3; ++p) {
    const auto tag = "[" + std::to_string(p) + "] ";
    CHECK(r.output.find(tag + "ProcessFailureError: Devices failed: {CpuDevice(id=6), CpuDevice(id=7)}; "
                              "failed_devices: [CpuDevice(id=6), CpuDevice(id=7)]")
          != std::string::npos);
    CHECK(r.output.find(tag + "live devices afterwards: [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), "
                              "CpuDevice(id=3), CpuDevice(id=4), CpuDevice(id=5)]")
          != std::string::npos);
  }
}

TEST_CASE("multihost: the multihost tour runs alone, a cluster of one process on 8 devices", "[integration][multihost]") {
  const auto tour = am::testing::binary_dir() + "/demos/multihost_tour";
  REQUIRE(std::filesystem::exists(tour));
  auto r = am::testing::run_command("env AM_CPU_DEVICES=8 " + tour, 120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("np.arange(8) * host_id over Mesh(devices, 'x'), P('x'): global shape (8,), value [0 0 0 0 0 0 0 0]\n")
        != std::string::npos);
  CHECK(r.output.find("live devices: 8 of 8\n") != std::string::npos);
}
