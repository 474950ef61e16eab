// `actormesh info --watch` against a real running cluster: two processes of
// tests/programs/stats_load keep their devices and host lanes busy; the watch, another process,
// asks their mesh supervisor for every process's counters, refreshes --count times and ends by
// itself; a stopped process is listed as not answering; then the cluster ends and a watch of it
// says no cluster answers. Also: each process's Prometheus endpoint scraped, --json, and frames
// clipped to a small terminal. Everything bounded.
#include "support/build_paths.hpp"
#include "support/loopback_http.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <unistd.h>

using namespace std::chrono_literals;

namespace {

bool wait_for_output(am::testing::process_group& group, const std::string& text, std::chrono::seconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (std::size_t i = 0; i < group.size(); ++i)
      all = all && group[i].output().find(text) != std::string::npos;
    if (all)
      return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("info --watch prints every process's live counters of a running cluster and stops by itself",
          "[info_watch]") {
  auto stop = std::filesystem::temp_directory_path() / ("am_info_watch_stop_" + std::to_string(::getpid()));
  std::filesystem::remove(stop);
  int port = am::testing::free_loopback_port();
  // Each process also serves its counters to Prometheus, on metrics_port + its index.
  const int metrics_port = am::testing::free_loopback_port();
  am::testing::process_group group;
  for (int p = 0; p < 2; ++p) {
    auto env = am::testing::cluster_env(p, 2, port, 2);
    env["AM_METRICS_PORT"] = std::to_string(metrics_port);
    group.start({am::testing::test_program_dir() + "/stats_load", stop.string()}, env);
  }
  REQUIRE(wait_for_output(group, "formed", 30s));
  for (int p = 0; p < 2; ++p) {
    auto scraped = am::testing::http_get(metrics_port + p);
    INFO(scraped.substr(0, 2000));
    CHECK(scraped.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(scraped.find("actormesh_device_calls_done_total{process=\"" + std::to_string(p) + "\"") != std::string::npos);
    CHECK(scraped.find("actormesh_lane_tasks_done_total{process=\"" + std::to_string(p) + "\"") != std::string::npos);
  }

  std::string coordinator = "127.0.0.1:" + std::to_string(port);
  auto watch = am::testing::run_command(am::testing::tool_path() + " info --watch --coordinator " + coordinator
                                          + " --count 3 --interval 0.3",
                                        60);
  INFO(watch.output);
  CHECK(watch.status == 0);
  CHECK(occurrences(watch.output, "cluster at " + coordinator + ": 2 processes (refresh ") == 3);
  CHECK(watch.output.find("(refresh 3 of 3)") != std::string::npos);
  CHECK(watch.output.find("\x1b[") == std::string::npos); // not a terminal: plain blocks
  CHECK(occurrences(watch.output, "process 0  up ") == 3);
  CHECK(occurrences(watch.output, "process 1  up ") == 3);
  CHECK(watch.output.find("no counters") == std::string::npos);
  // Every device line of the last refresh shows calls done; each process has its host lane.
  auto last = watch.output.substr(watch.output.rfind("(refresh 3 of 3)"));
  std::regex device_line(R"(\n  (\S+) +(\d+) +(\d+) +(\d+) +(\S+) +)");
  int devices = 0;
  for (std::sregex_iterator it(last.begin(), last.end(), device_line), end; it != end; ++it) {
    if ((*it)[1] == "device")
      continue;
    ++devices;
    CHECK(std::stoull((*it)[3]) > 0);                             // done
    CHECK(std::stoull((*it)[2]) >= std::stoull((*it)[3]));        // queued >= done
  }
  CHECK(devices == 4); // 2 processes x 2 devices
  CHECK(occurrences(last, "  lane of caller ") >= 2);

  // On a terminal (util-linux's `script` gives the watch one) each refresh redraws the previous one
  // in place: back to its first line (11 lines: a header, then 5 per process), clear below.
  if (std::filesystem::exists("/usr/bin/script")) {
    auto tty = am::testing::run_command("script -qc '" + am::testing::tool_path() + " info --watch --coordinator "
                                          + coordinator + " --count 2 --interval 0.3' /dev/null",
                                        60);
    INFO(tty.output);
    CHECK(tty.status == 0);
    CHECK(occurrences(tty.output, "\x1b[11F\x1b[J") == 1);
    CHECK(tty.output.find("(refresh 2 of 2)") != std::string::npos);
    // A terminal of 6 rows: each frame is clipped to 6 lines, the last saying how many were left
    // out, so the redraw goes back 6 lines and nothing scrolls.
    auto small = am::testing::run_command("script -qc 'stty rows 6 cols 100; " + am::testing::tool_path()
                                            + " info --watch --coordinator " + coordinator
                                            + " --count 2 --interval 0.3' /dev/null",
                                          60);
    INFO(small.output);
    CHECK(small.status == 0);
    CHECK(occurrences(small.output, "\x1b[6F\x1b[J") == 1);
    CHECK(occurrences(small.output, "... 6 more lines (a taller terminal shows them") == 2);
  }

  // --json: one object a refresh, one line each, with every process's devices.
  auto json = am::testing::run_command(am::testing::tool_path() + " info --watch --json --coordinator " + coordinator
                                         + " --count 2 --interval 0.3",
                                       60);
  INFO(json.output);
  CHECK(json.status == 0);
  CHECK(occurrences(json.output, "{\"coordinator\":\"" + coordinator + "\"") == 2);
  CHECK(occurrences(json.output, "\n") == 2);
  CHECK(occurrences(json.output, "\"device\":\"CpuDevice(id=") == 2 * 4);
  CHECK(json.output.find("\x1b[") == std::string::npos);

  // A process that cannot answer (stopped by SIGSTOP) is listed as such; the other is still shown.
  ::kill(group[1].pid, SIGSTOP);
  auto stalled = am::testing::run_command(am::testing::tool_path() + " info --watch --coordinator " + coordinator
                                            + " --count 1 --answer-timeout 1.5",
                                          60);
  ::kill(group[1].pid, SIGCONT);
  INFO(stalled.output);
  CHECK(stalled.status == 0);
  CHECK(stalled.output.find("process 0  up ") != std::string::npos);
  CHECK(stalled.output.find("process 1: no counters: no answer within 1000 ms") != std::string::npos);

  std::ofstream(stop) << "stop\n";
  bool ended = group.wait(30s);
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t i = 0; i < group.size(); ++i)
    CHECK(group[i].status == 0);
  std::filesystem::remove(stop);

  // The cluster is gone: a watch says so (after its connect timeout) instead of waiting forever.
  auto gone = am::testing::run_command(am::testing::tool_path() + " info --watch --coordinator " + coordinator
                                         + " --count 1 --connect-timeout 1",
                                       60);
  INFO(gone.output);
  CHECK(gone.status == 2);
  CHECK(gone.output.find("no cluster answers at " + coordinator + " within 1000 ms") != std::string::npos);
}

TEST_CASE("info --watch refuses a missing or malformed coordinator address", "[info_watch]") {
  auto none = am::testing::run_command("env -u AM_COORDINATOR " + am::testing::tool_path() + " info --watch", 30);
  CHECK(none.status == 2);
  CHECK(none.output.find("which cluster?") != std::string::npos);
  auto bad = am::testing::run_command(am::testing::tool_path() + " info --watch --coordinator nowhere", 30);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("must be HOST:PORT") != std::string::npos);
  auto zero = am::testing::run_command(am::testing::tool_path() + " info --watch --coordinator 127.0.0.1:1 --interval 0", 30);
  CHECK(zero.status == 2);
}
