// Traced runs of real processes (AM_TRACE): the trace probe alone and under `actormesh launch -n 2`
// (merged into one file, with a clock offset per process), and the sharding tour. Each trace must
// parse, be well nested per track and hold as many events as the work done: N jitted calls on D
// devices give N*D device programs, one barrier one collective event per process, a sum across
// processes shard transfers both ways. Tracing is off
// by default, and an unwritable path stops the program with a message that names it.
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/trace_file.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using am::testing::read_trace_file;
using am::testing::run_command;

namespace {

std::string fresh_dir(const std::string& what) {
  auto dir = std::filesystem::temp_directory_path() / ("am_trace_" + what + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

const std::string probe = am::testing::test_program_dir() + "/trace_probe";

/// Device-program events (category "device") whose name contains `part`, of process `pid`.
std::size_t programs_named(const am::testing::read_trace& t, const std::string& part, std::int64_t pid,
                           std::set<std::int64_t>* tracks = nullptr) {
  std::size_t n = 0;
  for (auto& e : t.events)
    if (e.cat == "device" && e.ph == "X" && e.pid == pid && e.name.find(part) != std::string::npos) {
      ++n;
      if (tracks)
        tracks->insert(e.tid);
    }
  return n;
}

} // namespace

TEST_CASE("trace: one process, N jitted calls on D devices give N*D device programs", "[integration][trace]") {
  const auto dir = fresh_dir("one");
  const auto path = dir + "/t.json";
  auto r = run_command("env AM_TRACE=" + path + " " + probe + " 6 --am-cpu-devices=4 --am-gpus=off", 120);
  INFO(r.output);
  REQUIRE(r.status == 0);
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  std::set<std::int64_t> tracks;
  CHECK(programs_named(t, "traced_f", 1, &tracks) == 6 * 4); // process 0 is pid 1
  CHECK(tracks.size() == 4); // one track per device
  for (auto tid : tracks)
    CHECK_THAT(t.track_names.at({1, tid}), Catch::StartsWith("device CpuDevice(id="));
  CHECK(t.count("lane", "admit") >= 6 * 4);
  CHECK(t.count("lane", "send") >= 1);
  CHECK(t.count("device", "upload") >= 4);
  CHECK(t.count("user", "jitted calls") == 1);
  CHECK(t.count("collective") == 0);
  CHECK(t.other.at("process").get<std::int64_t>() == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: off by default, a run writes no trace", "[integration][trace]") {
  const auto dir = fresh_dir("off");
  auto r = run_command("sh -c 'cd " + dir + " && exec env -u AM_TRACE " + probe + " 2 --am-cpu-devices=2 --am-gpus=off'", 120);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: an unwritable trace path stops the program with a clear message", "[integration][trace]") {
  auto r = run_command("env AM_TRACE=/nonexistent-folder/t.json " + probe + " 1 --am-cpu-devices=2 --am-gpus=off", 120);
  INFO(r.output);
  CHECK(r.status == 1); // the probe's own error exit, not a signal
  CHECK_THAT(r.output, Catch::Contains("cannot write the trace to '/nonexistent-folder/t.json'"));
  CHECK_THAT(r.output, Catch::Contains("does not exist"));
  auto flag = run_command(probe + " 1 --am-cpu-devices=2 --am-gpus=off --am-trace=/nonexistent-folder/t.json", 120);
  CHECK(flag.status == 1);
  CHECK_THAT(flag.output, Catch::Contains("cannot write the trace to '/nonexistent-folder/t.json'"));
}

TEST_CASE("trace: two processes under actormesh launch merge into one trace", "[integration][trace]") {
  const auto dir = fresh_dir("launch");
  const auto path = dir + "/t.json";
  std::ofstream(path + ".rank1") << "not a trace: left by an earlier run, removed before the launch";
  auto r = run_command("env AM_TRACE=" + path + " " + am::testing::tool_path() + " launch -n 2 --cpu-devices 2 --timeout 120 -- "
                         + probe + " 3 --am-gpus=off",
                       150);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_FALSE(std::filesystem::exists(path + ".rank0")); // merged, then removed
  CHECK_FALSE(std::filesystem::exists(path + ".rank1"));
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(t.process_names.size() == 2);
  for (std::int64_t pid : {1, 2}) { // process i is pid i + 1
    CAPTURE(pid);
    CHECK(programs_named(t, "traced_f", pid) == 3 * 2);
    CHECK(t.count("collective", "barrier", pid) == 1);
    CHECK(t.count("collective", "all_gather", pid) == 1);
    CHECK(t.count("user", "jitted calls", pid) == 1);
    // The global sum's partial sums crossed processes: a shard sent and one received each way.
    CHECK(t.count("transfer", "send shard", pid) >= 1);
    CHECK(t.count("transfer", "receive", pid) >= 1);
  }
  for (auto& e : t.events)
    if (e.cat == "collective" && e.name == "all_gather")
      CHECK(e.args.at("bytes").get<std::int64_t>() == 16 * 4);
  // Process 1 measured its offset to process 0 through the supervisor; on one host both read the
  // same monotonic clock, so the offset is within the round trip.
  const auto& merged = t.other.at("merged_from");
  REQUIRE(merged.size() == 2);
  bool found = false;
  for (auto& p : merged) {
    if (p.at("process").get<std::int64_t>() != 1)
      continue;
    found = true;
    const auto rtt = p.at("clock_rtt_ns").get<std::int64_t>();
    const auto offset = p.at("clock_offset_ns").get<std::int64_t>();
    CHECK(rtt > 0);
    CHECK(std::llabs(offset) <= rtt);
  }
  CHECK(found);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: the program's --am-trace under actormesh launch is merged as AM_TRACE is", "[integration][trace]") {
  const auto dir = fresh_dir("launch_flag");
  const auto path = dir + "/flag.json";
  auto r = run_command("env -u AM_TRACE " + am::testing::tool_path() + " launch -n 2 --cpu-devices 2 --timeout 120 -- "
                         + probe + " 1 --am-gpus=off --am-trace=" + path,
                       150);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_FALSE(std::filesystem::exists(path + ".rank0"));
  CHECK_FALSE(std::filesystem::exists(path + ".rank1"));
  auto t = read_trace_file(path);
  CHECK(t.process_names.size() == 2);
  CHECK(t.process_names.at(1) == "process 0");
  CHECK(t.process_names.at(2) == "process 1");
  CHECK(programs_named(t, "traced_f", 2) == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: a program's second runtime writes its own file, never over the first's", "[integration][trace]") {
  const auto dir = fresh_dir("twice");
  const auto path = dir + "/t.json";
  auto r = run_command("env AM_LOG=info AM_TRACE=" + path + " " + probe + " 2 twice --am-cpu-devices=2 --am-gpus=off", 120);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("trace written to " + path));
  CHECK_THAT(r.output, Catch::Contains("trace written to " + dir + "/t.2.json"));
  auto first = read_trace_file(path);
  auto second = read_trace_file(dir + "/t.2.json");
  CHECK(programs_named(first, "traced_f", 1) == 2 * 2);
  CHECK(programs_named(first, "second_f", 1) == 0);
  CHECK(programs_named(second, "second_f", 1) == 2);
  CHECK(programs_named(second, "traced_f", 1) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: a process killed by SIGKILL leaves its trace up to its last flush", "[integration][trace]") {
  const auto dir = fresh_dir("killed");
  const auto path = dir + "/t.json";
  auto r = run_command("env AM_TRACE_FLUSH_SECONDS=1 AM_TRACE=" + path + " " + probe + " 3 killed --am-cpu-devices=2 --am-gpus=off",
                       120);
  INFO(r.output);
  CHECK(r.status == 128 + 9);
  CHECK_THAT(r.output, Catch::Contains("killing myself"));
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  CHECK(programs_named(t, "traced_f", 1) == 3 * 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace: the sharding tour traced is valid and nested, with programs on all 8 devices",
          "[integration][trace][tour]") {
  const auto dir = fresh_dir("tour");
  const auto path = dir + "/tour.json";
  auto r = run_command("env AM_TRACE=" + path + " " + am::testing::binary_dir() + "/demos/sharding_tour --quick --am-gpus=off", 300);
  INFO(r.output.substr(r.output.size() > 2000 ? r.output.size() - 2000 : 0));
  REQUIRE(r.status == 0);
  auto t = read_trace_file(path);
  CHECK(t.nesting_error.empty());
  std::set<std::int64_t> tracks;
  for (auto& e : t.events)
    if (e.cat == "device" && e.ph == "X" && e.name != "upload" && e.name != "fetch")
      tracks.insert(e.tid);
  CHECK(tracks.size() == 8);
  CHECK(t.count("lane", "admit") >= t.count("device"));
  CHECK(t.other.at("dropped_events").get<std::int64_t>() == 0);
  std::filesystem::remove_all(dir);
}
