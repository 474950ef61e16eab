// The hang behind two single-controller test failures (doc/testing.md, "Tests that failed once,
// their causes and fixes"; devices/detail/exit_watch.hpp): a detached actor another process holds
// sends its down message to the BASP broker after the middleman stopped, and ~actor_system then
// waits forever for that actor. tests/programs/exit_watch_probe.cpp makes that order certain; with
// am::detail::exit_watch (what the runtime does for its call server, reply sink and devices) the
// actor system still ends. The probe's "bare" mode, without the watch, hangs every time (checked by
// hand; see doc/testing.md).
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

namespace {

using namespace std::chrono_literals;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/exit_watch_probe";

} // namespace

TEST_CASE("a detached actor another process holds has sent its down message before its actor system ends",
          "[integration][exit-watch]") {
  process_group group;
  auto port = std::to_string(free_loopback_port());
  group.start({probe, "hold", port}, {});
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (group[0].output().find("listening") == std::string::npos && !group.wait(0ms, {0})
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  INFO(group.all_output());
  REQUIRE(group[0].output().find("listening") != std::string::npos);
  group.start({probe, "own", port, "guarded"}, {});
  REQUIRE(group.wait(40s)); // the owner's actor system ended, and the holder saw its actor go
  CHECK(group[1].status == 0);
  CHECK(group[1].output().find("done") != std::string::npos);
  CHECK(group[1].output().find("error") == std::string::npos);
  CHECK(group[0].status == 0);
  CHECK(group[0].output().find("holder: the owner's actor is down") != std::string::npos);
}
