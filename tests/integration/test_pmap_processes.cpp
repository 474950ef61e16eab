// pmap across processes: under `actormesh launch -n 2` every process runs the same program, pmap
// maps over the first device of each process, and the collectives cross the processes as collective
// stages through the collectives engine (am::communicator, numbered and checked by the supervisor):
// psum, pmean, pmax and pmin all-reduced, all_gather all-gathered, ppermute through one all-to-all
// of only the slices that cross, psum_scatter (along any dimension) reduce-scattered. The same
// training and the same collectives in one process (2 local devices) give the same values bit for
// bit, and so do the collectives over 4 devices held unevenly by the processes (3 and 1, in runs or
// interleaved); a process killed mid-training or between gather, scatter or permute stages ends the
// other's step with process_failure_error naming it, within seconds, not a hang; processes that
// call a pmap with other shapes or in_axes get the call's agreement check's desync error before
// anything moves; processes that issue different collectives (a psum against an all_gather, a
// psum_scatter along dim 0 or 1, or a ppermute, also over uneven devices), get the supervisor's
// desync error and the flight recorder's dump; a process that stalls makes the other's stage time
// out naming it; two threads per process mapping different devices need no order between them; the
// pmap tour runs under the launcher with the same w, b. (pmap_tour is a demo: build it first when
// building test targets alone.)
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace {

const std::string probe = am::testing::test_program_dir() + "/pmap_probe";
const std::string tool = am::testing::tool_path();

/// The lines of `output` that start with `prefix` (prefix removed).
std::vector<std::string> lines_after(const std::string& output, const std::string& prefix) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < output.size()) {
    auto end = output.find('\n', at);
    if (end == std::string::npos)
      end = output.size();
    auto line = output.substr(at, end - at);
    if (line.rfind(prefix, 0) == 0)
      out.push_back(line.substr(prefix.size()));
    at = end + 1;
  }
  return out;
}

/// One process alone, with `devices` CPU devices.
am::testing::command_result alone(const std::string& args, int devices = 2) {
  return am::testing::run_command("env AM_CPU_DEVICES=" + std::to_string(devices) + " " + probe + " " + args, 120);
}

am::testing::command_result two_processes(const std::string& program, const std::string& args, int cpu_devices) {
  return am::testing::run_command(tool + " launch -n 2 --cpu-devices " + std::to_string(cpu_devices)
                                    + " --timeout 150 -- " + program + " " + args,
                                  180);
}

/// The probe alone and under the launcher (CPU devices per process), both checked to succeed.
std::pair<am::testing::command_result, am::testing::command_result> alone_and_launched(const std::string& args,
                                                                                        int cpu_devices,
                                                                                        int alone_devices = 2) {
  auto one = alone(args, alone_devices);
  INFO(one.output);
  REQUIRE(one.status == 0);
  auto two = two_processes(probe, args, cpu_devices);
  INFO(two.output);
  REQUIRE(two.status == 0);
  return {one, two};
}

/// The one line of `one` (a run alone) that starts with `prefix`, checked to be printed the same by
/// both processes of `two` (a launcher's run, lines tagged "[p] "); returns it (prefix removed).
std::string same_line_everywhere(const am::testing::command_result& one, const am::testing::command_result& two,
                                 const std::string& prefix) {
  auto expected = lines_after(one.output, prefix);
  REQUIRE(expected.size() == 1);
  for (int p = 0; p < 2; ++p) {
    auto got = lines_after(two.output, "[" + std::to_string(p) + "] " + prefix);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == expected[0]);
  }
  return expected[0];
}

/// A fresh, empty directory for flight recorder dumps, named after `what` and this process.
std::filesystem::path fresh_dump_dir(const std::string& what) {
  auto dir = std::filesystem::temp_directory_path() / ("am_pmap_" + what + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Starts the probe with `args` as both processes of a new cluster (started directly, not by the
/// launcher, which stops every process when one dies), each with `extra` added to its environment.
void start_both(am::testing::process_group& group, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& extra) {
  const int port = am::testing::free_loopback_port();
  std::vector<std::string> argv{probe};
  argv.insert(argv.end(), args.begin(), args.end());
  for (int p = 0; p < 2; ++p) {
    auto env = am::testing::cluster_env(p, 2, port);
    for (auto& [k, v] : extra)
      env[k] = v;
    group.start(argv, env);
  }
}

/// Runs the probe with `args` (process 1 kills itself at step 20) as both processes of a cluster
/// with a 20 s collective timeout: process 0's step ends with process_failure_error naming
/// process 1, within seconds (the failure, not the timeout), not a hang.
void expect_failure_named(const std::vector<std::string>& args) {
  using namespace std::chrono_literals;
  am::testing::process_group group;
  start_both(group, args, {{"AM_COLLECTIVE_TIMEOUT", "20s"}});
  auto start = std::chrono::steady_clock::now();
  REQUIRE(group.wait(60s));
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(group.all_output());
  CHECK(group[1].signal == 9);
  CHECK(group[1].output().find("process 1 dies at step 20") != std::string::npos);
  auto errors = lines_after(group[0].output(), "error ");
  REQUIRE(errors.size() == 1);
  // Named as the failure notice names it, by the stage's collective or by the notice itself.
  CHECK(std::regex_search(errors[0], std::regex("^process_failure_error: .*process 1 \\(host")));
  CHECK(group[0].status == 1);
  CHECK(seconds < 30); // well inside the 20 s collective timeout plus start-up
}

/// Runs the probe with `args` (processes that issue different collectives) as both processes of a
/// cluster (`devices` CPU devices each): each ends with one error matching `desync` that names its
/// flight recorder dump, which exists, within seconds (the supervisor's check answers at once, long
/// before the 20 s timeout).
void expect_desync(const std::vector<std::string>& args, const std::regex& desync, int devices = 2) {
  using namespace std::chrono_literals;
  auto dir = fresh_dump_dir(args.back());
  am::testing::process_group group;
  start_both(group, args,
             {{"AM_COLLECTIVE_TIMEOUT", "20s"}, {"AM_FLIGHT_RECORDER_DIR", dir.string()},
              {"AM_CPU_DEVICES", std::to_string(devices)}});
  auto start = std::chrono::steady_clock::now();
  REQUIRE(group.wait(60s));
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(group.all_output());
  for (int p = 0; p < 2; ++p) {
    auto errors = lines_after(group[static_cast<std::size_t>(p)].output(), "error ");
    REQUIRE(errors.size() == 1);
    CHECK(std::regex_search(errors[0], desync));
    auto dump = (dir / ("flight_recorder." + std::to_string(p) + ".txt")).string();
    CHECK(errors[0].find("(flight recorder: " + dump + ")") != std::string::npos);
    CHECK(std::filesystem::exists(dump));
    CHECK(group[static_cast<std::size_t>(p)].status == 1);
  }
  CHECK(seconds < 15);
  std::filesystem::remove_all(dir);
}

} // namespace

TEST_CASE("pmap trains across two processes to the same w and b as one process, bit for bit", "[integration][pmap]") {
  auto [one, two] = alone_and_launched("train 200", 4);
  INFO(one.output << two.output);
  auto trained = same_line_everywhere(one, two, "w = ");
  // It did train: w and b approach 3 and 2.
  std::smatch m;
  REQUIRE(std::regex_search(trained, m, std::regex(R"(^(\S+)  b = (\S+))")));
  CHECK(std::abs(std::stod(m[1]) - 3) < 0.3);
  CHECK(std::abs(std::stod(m[2]) - 2) < 1.0);
}

TEST_CASE("every pmap collective across two processes gives one process's values", "[integration][pmap]") {
  auto [one, two] = alone_and_launched("collectives", 2);
  INFO(one.output << two.output);
  const char* names[] = {"psum", "pmean", "pmax", "pmin", "all_gather", "all_gather_tiled", "all_gather_axis1",
                         "all_gather_int32", "all_gather_float32", "all_gather_reversed", "ppermute",
                         "ppermute_partial", "psum_scatter", "psum_scatter_stacked", "psum_scatter_dim1",
                         "axis_index"};
  for (auto* name : names) {
    INFO(name);
    same_line_everywhere(one, two, std::string(name) + ": ");
  }
  // psum of rows [1 2 3 4] and [5 6 7 8]: their sum on both devices.
  CHECK(lines_after(one.output, "psum: ")[0] == "6.000000 8.000000 10.000000 12.000000 6.000000 8.000000 10.000000 "
                                                 "12.000000");
  // Device 0 receives no slice (zeros, + 1), device 1 device 0's.
  CHECK(lines_after(one.output, "ppermute_partial: ")[0] == "1.000000 1.000000 1.000000 1.000000 2.000000 "
                                                            "3.000000 4.000000 5.000000");
  // The rows in mapped order whichever process holds which (the devices reversed): 1 to 8.
  CHECK(lines_after(one.output, "all_gather_reversed: ")[0] == "1.000000 2.000000 3.000000 4.000000 5.000000 "
                                                               "6.000000 7.000000 8.000000");
}

TEST_CASE("pmap collectives over devices the processes hold unevenly (3 and 1, in runs or interleaved) give one "
          "process's values",
          "[integration][pmap]") {
  auto [one, two] = alone_and_launched("uneven", 3, 4); // across processes: stages; alone: one plan
  INFO(one.output << two.output);
  const char* names[] = {"psum", "all_gather", "all_gather_tiled_axis1", "ppermute_ring", "ppermute_partial",
                         "psum_scatter", "psum_scatter_stacked", "psum_scatter_dim1", "psum_scatter_dim1_stacked",
                         "psum_scatter_dim2"};
  for (auto* list : {"3+1 ", "interleaved "})
    for (auto* name : names) {
      INFO(list << name);
      same_line_everywhere(one, two, std::string(list) + name + ": ");
    }
  // The ring's device 0 receives device 3's slice (values 97 to 128), in both lists.
  for (auto* list : {"3+1 ", "interleaved "})
    CHECK(lines_after(one.output, std::string(list) + "ppermute_ring: ")[0].rfind("97.000000 98.000000 ", 0) == 0);
  // Device 0's block along dim 1 of the sum of the 4 slices [4, 4, 2] (1-32, 33-64, ...): element
  // [i, 0, k] of the sum, 4 (8 i + k + 1) + 192: 196 200 for i = 0, 228 232 for i = 1, ...
  CHECK(lines_after(one.output, "3+1 psum_scatter_dim1: ")[0].rfind("196.000000 200.000000 228.000000 232.000000 ", 0)
        == 0);
}

TEST_CASE("a process killed mid-training ends the other's pmap step with a clear error, not a hang",
          "[integration][pmap][errors]") {
  expect_failure_named({"die-at", "1", "20"});
}

TEST_CASE("processes that make different pmap calls both get a desync error and a flight recorder dump, not a hang",
          "[integration][pmap][errors]") {
  // Checked when pmap is called, before any slice moves: the shapes differ.
  expect_desync({"mismatch"}, std::regex(R"(^desync_error: pmap over devices \[0, 2\], call 0 differs between )"
                                       R"(processes \(desync\): process 0 issued pmap\(axis_name='i', devices \[0, 2\], )"
                                       R"(in_axes \(0\), out_axes \(None\)\) of \(float64\[2,4\]\) over processes \[0, 1\]; )"
                                       R"(process 1 issued pmap\(axis_name='i', devices \[0, 2\], in_axes \(0\), )"
                                       R"(out_axes \(None\)\) of \(float64\[2,5\]\))"));
}

TEST_CASE("processes that map the same shape along different in_axes get a desync error, not another region",
          "[integration][pmap][errors]") {
  expect_desync({"mismatch-axes"},
                std::regex(R"(^desync_error: pmap over devices \[0, 2\], call 0 differs between )"
                           R"(processes \(desync\): process 0 issued pmap\(axis_name='i', devices \[0, 2\], )"
                           R"(in_axes \(0\), out_axes \(None\)\) of \(float64\[2,2\]\) over processes \[0, 1\]; )"
                           R"(process 1 issued pmap\(axis_name='i', devices \[0, 2\], in_axes \(1\), )"));
}

TEST_CASE("pmap processes issuing different collectives (a psum against an all_gather or a psum_scatter) get the "
          "desync error and dumps",
          "[integration][pmap][errors]") {
  expect_desync({"mixed", "gather"},
                std::regex(R"(^desync_error: .*\(step 1 of communicator 'am\.pmap\.2\.[0-9a-f]+'.*)"
                           R"(differs between processes \(desync\): process 0 issued all_reduce\(sum\) )"
                           R"(float64\[4\] over processes \[0, 1\]; process 1 issued all_gather float64\[4\])"));
  expect_desync({"mixed", "scatter"},
                std::regex(R"(^desync_error: .*\(step 1 of communicator 'am\.pmap\.2\.[0-9a-f]+'.*)"
                           R"(differs between processes \(desync\): process 0 issued all_reduce\(sum\) )"
                           R"(float64\[4\] over processes \[0, 1\]; process 1 issued reduce_scatter\(sum\) )"
                           R"(float64\[4\])"));
  expect_desync({"mixed", "permute"}, // a ppermute across processes is an all-to-all stage: a slot a block
                std::regex(R"(^desync_error: .*\(step 1 of communicator 'am\.pmap\.2\.[0-9a-f]+'.*)"
                           R"(differs between processes \(desync\): process 0 issued all_reduce\(sum\) )"
                           R"(float64\[4\] over processes \[0, 1\]; process 1 issued all_to_all float64\[8\])"));
}

TEST_CASE("pmap processes issuing different collectives where one is a psum_scatter along dim 1 or a ppermute over "
          "uneven devices get the desync error and dumps (no longer a shard transfer's timeout)",
          "[integration][pmap][errors]") {
  expect_desync({"mixed", "scatter1"},
                std::regex(R"(^desync_error: .*\(step 1 of communicator 'am\.pmap\.2\.[0-9a-f]+'.*)"
                           R"(differs between processes \(desync\): process 0 issued all_reduce\(sum\) )"
                           R"(float64\[4\] over processes \[0, 1\]; process 1 issued reduce_scatter\(sum\) )"
                           R"(float64\[4\])"));
  // A ring over 3 devices of process 0 and 1 of process 1: each process sends the other one slice
  // (float64[4]), so the all-to-all moves 2 blocks of 1 slot, not the 4 slices of an all-gather.
  expect_desync({"mixed", "ring", "uneven"},
                std::regex(R"(^desync_error: .*\(step 1 of communicator 'am\.pmap\.4\.[0-9a-f]+'.*)"
                           R"(differs between processes \(desync\): process 0 issued all_reduce\(sum\) )"
                           R"(float64\[4\] over processes \[0, 1\]; process 1 issued all_to_all float64\[8\])"),
                3);
}

TEST_CASE("a process killed between pmap all_gather, psum_scatter or ppermute stages ends the other's with "
          "process_failure_error naming it",
          "[integration][pmap][errors]") {
  expect_failure_named({"stage-die-at", "gather", "1", "20"});
  expect_failure_named({"stage-die-at", "scatter", "1", "20"});
  expect_failure_named({"stage-die-at", "permute", "1", "20"});
}

TEST_CASE("a process that stalls before a pmap call fails the other's call with a timeout naming it, not a hang",
          "[integration][pmap][errors]") {
  using namespace std::chrono_literals;
  auto dir = fresh_dump_dir("stall");
  am::testing::process_group group;
  start_both(group, {"stall", "6000"}, {{"AM_COLLECTIVE_TIMEOUT", "2s"}, {"AM_FLIGHT_RECORDER_DIR", dir.string()}});
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  auto out = group[0].output();
  CHECK(lines_after(out, "stall: ").size() == 1);
  auto errors = lines_after(out, "error ");
  REQUIRE(errors.size() == 1);
  // The second call's agreement check is where process 0 waits for it.
  CHECK(std::regex_search(errors[0], std::regex(R"(^timeout_error: pmap over devices \[0, 2\], call 1 )"
                                                R"(timed out after \d+ ms: process 1 has not arrived)")));
  // The latecomer, finding process 0 gone, reports process 0's verdict (left in the store).
  auto late = lines_after(group[1].output(), "error ");
  REQUIRE(late.size() == 1);
  CHECK(late[0].find("pmap over devices [0, 2], call 1 timed out after 2000 ms: process 1 has not arrived") !=
        std::string::npos);
  CHECK(std::filesystem::exists(dir / "flight_recorder.0.txt"));
  CHECK(group[0].status == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("debug_print inside a pmap across two processes: each process prints its own device's slice, every call",
          "[integration][pmap][debugging]") {
  auto [one, two] = alone_and_launched("effects", 2);
  INFO(one.output << two.output);
  // Alone, both devices are this process's: each slice twice (two calls), and the psum with it.
  auto printed = lines_after(one.output, "effect slice ");
  std::sort(printed.begin(), printed.end());
  CHECK(printed == std::vector<std::string>{"[1. 2.] sum [4. 6.]", "[1. 2.] sum [4. 6.]", "[3. 4.] sum [4. 6.]",
                                            "[3. 4.] sum [4. 6.]"});
  // Launched, each process owns one device and prints only its slice.
  CHECK(lines_after(two.output, "[0] effect slice ") == std::vector<std::string>(2, "[1. 2.] sum [4. 6.]"));
  CHECK(lines_after(two.output, "[1] effect slice ") == std::vector<std::string>(2, "[3. 4.] sum [4. 6.]"));
  for (int call = 0; call < 2; ++call)
    CHECK(same_line_everywhere(one, two, "effects call " + std::to_string(call) + ": ")
          == "8.000000 12.000000 8.000000 12.000000");
  same_line_everywhere(one, two, "effects done");
}

TEST_CASE("two threads per process psumming over different devices at once all get their own sums",
          "[integration][pmap][threads]") {
  using namespace std::chrono_literals;
  am::testing::process_group group;
  start_both(group, {"threads", "40"}, {{"AM_COLLECTIVE_TIMEOUT", "20s"}});
  REQUIRE(group.wait(90s));
  INFO(group.all_output());
  for (int p = 0; p < 2; ++p) {
    CHECK(lines_after(group[static_cast<std::size_t>(p)].output(), "threads: ") == std::vector<std::string>{"80 correct of 80"});
    CHECK(group[static_cast<std::size_t>(p)].status == 0);
  }
}

TEST_CASE("the pmap tour runs under actormesh launch -n 2 --cpu-devices 4 with the same w and b as alone",
          "[integration][pmap]") {
  const auto tour = am::testing::binary_dir() + "/demos/pmap_tour";
  REQUIRE(std::filesystem::exists(tour));
  auto one = am::testing::run_command(tour + " --steps 300", 120);
  INFO(one.output);
  REQUIRE(one.status == 0);
  auto two = two_processes(tour, "--steps 300", 4);
  INFO(two.output);
  REQUIRE(two.status == 0);
  same_line_everywhere(one, two, "w = ");
  for (int p = 0; p < 2; ++p) {
    auto tag = "[" + std::to_string(p) + "] ";
    CHECK(two.output.find(tag + "actormesh pmap tour: 2 of 8 devices, 2 process(es)") != std::string::npos);
    CHECK(lines_after(two.output, tag + "all ").size() == 1);
  }
}
