// live_devices across real processes: every process gets the same live devices; when one process
// is killed inside the block, every survivor gets process_failure_error listing exactly its
// devices, and the next block runs on the survivors alone. Runs tests/programs/multihost_probe.cpp.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

std::string id_list(int from, int to, int skip_from = -1, int skip_to = -1) {
  std::string out;
  for (int i = from; i < to; ++i)
    if (i < skip_from || i >= skip_to)
      out += (out.empty() ? "" : " ") + std::to_string(i);
  return out;
}

} // namespace

TEST_CASE("multihost: live_devices fails every survivor with exactly the killed process's devices",
          "[integration][multihost]") {
  for (int n : {2, 4}) {
    const int victim = n == 2 ? 1 : 2; // never process 0, which hosts the coordinator
    process_group group;
    const int port = free_loopback_port();
    for (int p = 0; p < n; ++p) {
      auto env = cluster_env(p, n, port);
      env["AM_COLLECTIVE_TIMEOUT"] = "20s";
      group.start({am::testing::test_program_dir() + "/multihost_probe", "live-devices", std::to_string(victim)}, env);
    }
    REQUIRE(group.wait(60s));
    INFO(group.all_output());
    CHECK(group[static_cast<std::size_t>(victim)].signal == 9);
    const std::string all = id_list(0, 2 * n);
    const std::string lost = id_list(2 * victim, 2 * victim + 2);
    const std::string lost_text = "{CpuDevice(id=" + std::to_string(2 * victim) + "), CpuDevice(id="
                                  + std::to_string(2 * victim + 1) + ")}";
    for (int p = 0; p < n; ++p) {
      if (p == victim)
        continue;
      auto out = group[static_cast<std::size_t>(p)].output();
      CHECK(group[static_cast<std::size_t>(p)].status == 0);
      CHECK(has_line(out, "first live: " + all));
      CHECK(has_line(out, "first block passed"));
      CHECK(has_line(out, "no devices: error value_error: No devices provided."));
      CHECK(has_line(out, "no local devices: error value_error: Provided devices do not have any local devices."));
      if (p == 1)
        CHECK(has_line(out, "body throws: error value_error: the body's own error"));
      else
        CHECK(has_line(out, "body throws: passed"));
      CHECK(has_line(out, "second live: " + all));
      CHECK(has_line(out, "second block failed devices: " + lost));
      CHECK(has_line(out, "second block error: Devices failed: " + lost_text));
      CHECK_FALSE(has_line(out, "second block passed"));
      auto at = out.find("second block failed after ms: ");
      REQUIRE(at != std::string::npos);
      CHECK(std::stol(out.substr(at + 30)) < 5000);
      CHECK(has_line(out, "third live: " + id_list(0, 2 * n, 2 * victim, 2 * victim + 2)));
      CHECK(has_line(out, "third block passed"));
      CHECK(has_line(out, "done"));
    }
  }
}
