// A program the flight recorder tests start as every process of a cluster (AM_* variables, and
// AM_FLIGHT_RECORDER_DIR): it runs all-gathers on a communicator of its own until one scenario
// breaks them, and prints what it saw ("error <kind>: message", then "done").
//
//   flight_probe desync P   two good all-gathers, then process P issues a broadcast where the
//                           others issue a third all-gather: a desync on every process
//   flight_probe stall P    two good all-gathers, then process P sleeps AM_STALL_MS (past the
//                           collective timeout) instead of the third: the others time out
//   flight_probe barrier P  two good all-gathers and a barrier, then process P sleeps AM_STALL_MS
//                           instead of a second barrier, which the others leave after 2 s
#include "actormesh.hpp"
#include "support/probe_output.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using am::testing::say;

int run(int argc, char** argv) {
  if (argc < 3)
    throw am::value_error("usage: flight_probe desync|stall|barrier P");
  const std::string scenario = argv[1];
  const int odd = std::atoi(argv[2]);
  am::runtime rt(argc, argv);
  const int p = am::process_index();
  auto comm = am::make_communicator("flight probe");
  std::vector<std::uint8_t> in(8, static_cast<std::uint8_t>(p)), out(8 * static_cast<std::size_t>(comm->size()));
  for (int k = 0; k < 2; ++k)
    comm->all_gather(in.data(), out.data(), in.size(), am::dtype::uint8);
  say("two gathers: passed");
  try {
    if (scenario == "barrier") {
      am::distributed::wait_at_barrier("first");
      if (p == odd) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(std::getenv("AM_STALL_MS"))));
        return 0;
      }
      am::distributed::wait_at_barrier("second", std::chrono::seconds(2));
    } else if (p == odd && scenario == "desync") {
      comm->broadcast(in.data(), in.size(), am::dtype::uint8, 0);
    } else if (p == odd && scenario == "stall") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(std::getenv("AM_STALL_MS"))));
      say("stalled: woke");
      return 0;
    } else {
      comm->all_gather(in.data(), out.data(), in.size(), am::dtype::uint8);
    }
    say("third: passed");
  } catch (const std::exception& e) {
    am::testing::report(e);
  }
  say("done");
  std::fflush(stdout);
  // Process 0 holds the coordinator: it stays a while, so that every other process meets its own
  // error rather than the coordinator's departure.
  if (p == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Then leave at once: the cluster's orderly stop would wait for the stalled process.
  std::_Exit(0);
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    am::testing::report(e);
    return 2;
  }
}
