// `actormesh stress` as a user runs it: the real tool, locally and as the controller of worker
// processes it starts on loopback (array operations alone, and the whole mix with its colocated
// calls running in the workers), and under `actormesh launch` (each process on its own devices); its report, its exit status, its plain progress lines when its
// output is not a terminal, and its refusals.
#include "support/build_paths.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {

am::testing::command_result stress(const std::string& args) {
  return am::testing::run_command("env AM_LOG=error '" + am::testing::tool_path() + "' stress " + args + " 2>&1", 240);
}

} // namespace

TEST_CASE("stress: a local colocated and array mix reports 0 violations and 0 errors and exits 0",
          "[integration][stress_command]") {
  auto r = stress("--threads 4 --calls 200 --cpu-devices 4");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("stress: 4 threads x 200 rounds, mix all, 4 devices in 1 process(es)") != std::string::npos);
  CHECK(r.output.find("rounds: 800, calls: 3200") != std::string::npos);
  CHECK(r.output.find("throughput: ") != std::string::npos);
  CHECK(r.output.find("round latency: p50 ") != std::string::npos);
  CHECK(r.output.find("order violations: 0\n") != std::string::npos);
  CHECK(r.output.find("errors: 0\n") != std::string::npos);
  // Not a terminal: plain progress lines, never a carriage return.
  CHECK(r.output.find("progress: 100% (800 of 800 rounds, ") != std::string::npos);
  CHECK(r.output.find('\r') == std::string::npos);
}

TEST_CASE("stress: array operations from 3 threads on the devices of 2 worker processes",
          "[integration][stress_command]") {
  auto r = stress("--threads 3 --calls 100 --processes 3 --mix arrays");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("6 devices in 3 process(es)") != std::string::npos);
  CHECK(r.output.find("rounds: 300, calls: 300") != std::string::npos);
  CHECK(r.output.find("order violations: 0\n") != std::string::npos);
  CHECK(r.output.find("errors: 0\n") != std::string::npos);
}

TEST_CASE("stress: colocated calls, objects and arrays from 4 threads run in 2 worker processes",
          "[integration][stress_command]") {
  auto r = stress("--threads 4 --calls 60 --processes 3");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("mix all, 6 devices in 3 process(es)") != std::string::npos);
  CHECK(r.output.find("rounds: 240, calls: 960") != std::string::npos);
  CHECK(r.output.find("order violations: 0\n") != std::string::npos);
  CHECK(r.output.find("errors: 0\n") != std::string::npos);
}

TEST_CASE("stress: each process of actormesh launch -n 2 stresses its own devices", "[integration][stress_command]") {
  const auto tool = am::testing::tool_path();
  auto r = am::testing::run_command("env AM_LOG=error '" + tool + "' launch -n 2 --cpu-devices 2 --timeout 200 -- '" + tool
                                      + "' stress --threads 2 --calls 20 2>&1",
                                    240);
  INFO(r.output);
  CHECK(r.status == 0);
  for (const char* p : {"[0] ", "[1] "}) {
    CHECK_THAT(r.output, Catch::Contains(std::string(p) + "order violations: 0"));
    CHECK_THAT(r.output, Catch::Contains(std::string(p) + "errors: 0"));
  }
}

TEST_CASE("stress: bad arguments are refused with status 2",
          "[integration][stress_command]") {
  struct refusal {
    std::string args, text;
  };
  for (auto& [args, text] : {refusal{"--threads 0 --calls 5", "--threads must be 1..1024"},
                             refusal{"--threads 2 --calls 1000000", "--calls must be 1..999999"},
                             refusal{"--threads 2 --calls 5 --mix bogus", "--mix must be all, colocated or arrays"},
                             refusal{"--threads 2 --calls 5 --processes 0", "--processes must be 1..64"},
                             refusal{"--threads 2 --calls 5 --processes 65", "--processes must be 1..64"},
                             refusal{"--calls 5", "--threads is required"}}) {
    INFO("stress " << args);
    auto r = stress(args);
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(text) != std::string::npos);
    CHECK(r.output.find("rounds:") == std::string::npos);
  }
}
