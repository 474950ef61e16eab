// reached_preemption_sync_point across real processes: SIGTERM raised on one process (caught,
// not fatal) makes every process return true at the same step, past the step of the signal,
// whichever process gets it, at which step, and whether the processes run in lock step or drift.
// Runs tests/programs/multihost_probe.cpp.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

struct scenario {
  int processes;
  int victim; ///< the process that raises SIGTERM
  int at;     ///< at this step
  const char* mode;
};

} // namespace

TEST_CASE("multihost: every process agrees on one preemption sync point after a SIGTERM anywhere",
          "[integration][multihost]") {
  const std::vector<scenario> scenarios{
      {2, 1, 3, "lockstep"}, {4, 0, 10, "lockstep"}, {4, 3, 0, "free"}, {2, 0, 5, "free"}, {4, 2, 40, "free"}};
  for (auto& s : scenarios) {
    DYNAMIC_SECTION(s.processes << " processes, SIGTERM on " << s.victim << " at step " << s.at << ", " << s.mode) {
      process_group group;
      const int port = free_loopback_port();
      for (int p = 0; p < s.processes; ++p) {
        auto env = cluster_env(p, s.processes, port);
        env["AM_COLLECTIVE_TIMEOUT"] = "20s";
        group.start({am::testing::test_program_dir() + "/multihost_probe", "preempt", std::to_string(s.victim),
                     std::to_string(s.at), s.mode},
                    env);
      }
      REQUIRE(group.wait(60s));
      INFO(group.all_output());
      std::set<long> points;
      for (int p = 0; p < s.processes; ++p) {
        auto out = group[static_cast<std::size_t>(p)].output();
        CHECK(group[static_cast<std::size_t>(p)].status == 0); // the signalled one too: SIGTERM was caught
        CHECK(group[static_cast<std::size_t>(p)].signal == 0);
        const std::string label = "preemption sync point at step ";
        auto at = out.find(label);
        REQUIRE(at != std::string::npos);
        points.insert(std::stol(out.substr(at + label.size())));
      }
      REQUIRE(points.size() == 1); // the same step everywhere
      CHECK(*points.begin() > s.at);
      CHECK(*points.begin() < 1000);
    }
  }
}
