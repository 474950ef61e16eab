// The flight recorder over real processes: a forced desync and a stalled process make every
// survivor write its dump and name it in its error, and `actormesh inspect-hang` explains the
// dumps (who stopped at which collective, what the others waited for). Each process runs
// tests/programs/flight_probe.cpp.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/flight_probe";

/// A fresh, empty dump directory.
std::string fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("am_flight_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Starts `count` probes playing `scenario` with dumps into `dir`; waits for `which` (all when
/// empty) to end.
void run_cluster(process_group& group, int count, const std::vector<std::string>& scenario, const std::string& dir,
                 const std::map<std::string, std::string>& extra = {}, std::vector<std::size_t> which = {}) {
  const int port = free_loopback_port();
  std::vector<std::string> argv{probe};
  argv.insert(argv.end(), scenario.begin(), scenario.end());
  for (int p = 0; p < count; ++p) {
    auto env = cluster_env(p, count, port);
    env["AM_COLLECTIVE_TIMEOUT"] = "20s";
    env["AM_FLIGHT_RECORDER_DIR"] = dir;
    for (auto& [k, v] : extra)
      env[k] = v;
    group.start(argv, env);
  }
  REQUIRE(group.wait(60s, which));
}

/// `actormesh inspect-hang dir`'s output and status.
std::pair<std::string, int> inspect(const std::string& dir) {
  process_group tool;
  tool.start({am::testing::tool_path(), "inspect-hang", dir}, {});
  REQUIRE(tool.wait(30s));
  return {tool[0].output(), tool[0].status};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("flight recorder: a forced desync is dumped by every process and explained by inspect-hang",
          "[integration][flight_recorder]") {
  const int n = 3;
  const std::string dir = fresh_dir("desync");
  process_group group;
  run_cluster(group, n, {"desync", "1"}, dir);
  INFO(group.all_output());
  for (int p = 0; p < n; ++p) {
    const auto out = group[static_cast<std::size_t>(p)].output();
    const std::string dump = dir + "/flight_recorder." + std::to_string(p) + ".txt";
    CHECK(contains(out, "two gathers: passed"));
    CHECK(contains(out, "error desync_error: "));
    CHECK(contains(out, "(flight recorder: " + dump + ")"));
    CHECK(std::filesystem::exists(dump));
  }
  auto [report, status] = inspect(dir);
  INFO(report);
  CHECK(status == 0);
  CHECK(contains(report, "3 flight recorder dumps (processes 0, 1, 2)"));
  CHECK(contains(report, "communicator 'flight probe' (processes 0, 1, 2):"));
  CHECK(contains(report, "the furthest step is 3"));
  CHECK(contains(report, "=> desync at step 3: processes 0, 2 issued all_gather uint8[8]; process 1 issued "
                         "broadcast uint8[8] root=0"));
  CHECK(contains(report, "process 1 at step 3 (broadcast uint8[8] root=0) failed in it"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("flight recorder: a stalled process is named as the one the others wait for",
          "[integration][flight_recorder]") {
  const int n = 3;
  const std::string dir = fresh_dir("stall");
  process_group group;
  // The survivors time out after 2 s; the stalled process sleeps past that and writes no dump.
  run_cluster(group, n, {"stall", "2"}, dir, {{"AM_COLLECTIVE_TIMEOUT", "2s"}, {"AM_STALL_MS", "6000"}}, {0, 1});
  INFO(group.all_output());
  for (int p = 0; p < 2; ++p) {
    const auto out = group[static_cast<std::size_t>(p)].output();
    CHECK(contains(out, "error timeout_error: "));
    CHECK(contains(out, "(flight recorder: " + dir + "/flight_recorder." + std::to_string(p) + ".txt)"));
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/flight_recorder.2.txt"));
  auto [report, status] = inspect(dir);
  INFO(report);
  CHECK(status == 0);
  CHECK(contains(report, "2 flight recorder dumps (processes 0, 1)"));
  CHECK(contains(report, "process 2 wrote no dump"));
  CHECK(contains(report, "=> process 2 is behind: processes 0, 1 wait for it at step 3 (all_gather uint8[8])"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("flight recorder: a barrier that times out is dumped, and the absent process named",
          "[integration][flight_recorder]") {
  const int n = 3;
  const std::string dir = fresh_dir("barrier");
  process_group group;
  run_cluster(group, n, {"barrier", "1"}, dir, {{"AM_STALL_MS", "6000"}}, {0, 2});
  INFO(group.all_output());
  for (int p : {0, 2}) {
    const auto out = group[static_cast<std::size_t>(p)].output();
    CHECK(contains(out, "error timeout_error: "));
    CHECK(contains(out, "(flight recorder: " + dir + "/flight_recorder." + std::to_string(p) + ".txt)"));
  }
  auto [report, status] = inspect(dir);
  INFO(report);
  CHECK(status == 0);
  CHECK(contains(report, "communicator 'barriers' (processes 0, 1, 2):"));
  CHECK(contains(report, "process 0 at step 2 (barrier 'second') failed in it"));
  CHECK(contains(report, "=> process 1 is behind: processes 0, 2 wait for it at step 2 (barrier 'second')"));
  // The communicator's two all-gathers completed everywhere.
  CHECK(contains(report, "'flight probe': every process that wrote a dump completed step 2 (process 1 wrote none)"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("inspect-hang refuses a directory without dumps and a malformed dump", "[integration][flight_recorder]") {
  const std::string dir = fresh_dir("bad");
  auto [empty_report, empty_status] = inspect(dir);
  CHECK(empty_status == 2);
  CHECK(contains(empty_report, "holds no flight recorder dumps"));
  {
    std::ofstream bad(dir + "/flight_recorder.0.txt");
    bad << "actormesh flight recorder 1\nprocess 0\nentry\tnot a number\n";
  }
  auto [bad_report, bad_status] = inspect(dir);
  CHECK(bad_status == 2);
  CHECK(contains(bad_report, "Malformed flight recorder dump"));
  std::filesystem::remove_all(dir);
}
