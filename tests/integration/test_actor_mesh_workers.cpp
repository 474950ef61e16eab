// Actor meshes over a single-controller cluster's workers, with real processes on loopback: the
// controller and its workers all run tests/programs/actor_mesh_workers_probe.cpp (the same binary,
// so every process knows the registered classes); the controller spawns over the workers'
// devices and checks where each actor was built, every call form, order, errors, a restart, the
// stop (the workers destroy their instances), refusals, and a worker killed mid-call.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"
#include "support/single_controller.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

namespace {

using namespace std::chrono_literals;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/actor_mesh_workers_probe";

/// Starts the controller (index 0) playing `scenario`, then `workers` workers of the same binary.
void start_cluster(process_group& group, int workers, const std::string& scenario,
                   const std::map<std::string, std::string>& extra = {}) {
  am::testing::start_single_controller(group, probe, workers, scenario, extra);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Plays `scenario` on a controller with `workers` workers, requires every process to end within
/// 90 s and the controller to exit 0, and returns the controller's output.
std::string play(process_group& group, int workers, const std::string& scenario) {
  start_cluster(group, workers, scenario);
  bool ended = group.wait(90s);
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status == 0);
  return group[0].output();
}

} // namespace

TEST_CASE("a controller spawns an actor mesh over its workers' devices and calls it in every form",
          "[integration][actor_mesh][actor-mesh-workers]") {
  process_group group;
  auto out = play(group, 2, "calls");
  INFO(group.all_output());
  CHECK(has(out, "spawned 4 trainers"));
  // Each actor was built in the worker that owns its device, with that device.
  CHECK(has(out, "trainer 0 runs in process 1 devices 2"));
  CHECK(has(out, "trainer 1 runs in process 1 devices 3"));
  CHECK(has(out, "trainer 2 runs in process 2 devices 4"));
  CHECK(has(out, "trainer 3 runs in process 2 devices 5"));
  CHECK(has(out, "call add 2: 2 2 2 2"));
  CHECK(has(out, "totals after broadcast 3: 105 105 105 105"));
  CHECK(has(out, "choose total: 105"));
  CHECK(has(out, "square_sum [1 2 3] on the actors' devices: 14"));
  CHECK(has(out, "coroutine square_sum_later [1 2]: 105"));
  CHECK(has(out, "out of order: 0"));
  // An array argument arrives on the actor's device; the answer comes back on the controller's.
  CHECK(has(group[2].output(), "twice got its argument on device 5 of process 2"));
  CHECK(has(out, "twice [1 2 3]: [2. 4. 6.] on device 0"));
  CHECK(has(out, "value_error: no such step"));
  CHECK(has(out, "broken on purpose"));
  CHECK(has(out, "after the restart, total: 100")); // a fresh instance from the travelled arguments
  CHECK(has(out, "controller saw restarted of rank 0 at {device: 0} (process 1): am::actor_fault: broken on purpose"));
  CHECK(has(out, "stopped"));
  CHECK(has(out, "actor mesh of class 'probe.trainer' was stopped"));
  // The workers destroyed their instances: the restarted one twice (restart and stop).
  CHECK(has(group[1].output(), "trainer t 1 destroyed in process 1"));
  CHECK(has(group[2].output(), "trainer t 2 destroyed in process 2"));
  CHECK(has(group[2].output(), "trainer t 3 destroyed in process 2"));
}

TEST_CASE("arguments that cannot travel are refused for workers' points, and a constructor that throws in a worker "
          "fails its actor's calls with the cause",
          "[integration][actor_mesh][actor-mesh-workers]") {
  process_group group;
  auto out = play(group, 1, "refused");
  INFO(group.all_output());
  CHECK(has(out, "actors of class 'probe.needs_opaque' in worker processes are built there from the constructor's "
                 "arguments, and these arguments do not travel"));
  CHECK_FALSE(has(out, "spawned with opaque arguments"));
  CHECK(has(out, "local opaque: 7"));
  CHECK(has(out, "actor 'probe.broken' at {device: 0} (process 1) failed: am::value_error: broken(3) refuses to be built"));
  CHECK(has(out, "controller saw failed of rank 0: am::value_error: broken(3) refuses to be built"));
}

TEST_CASE("a worker killed during a call to its actor fails the call on the controller, never hangs",
          "[integration][actor_mesh][actor-mesh-workers]") {
  process_group group;
  start_cluster(group, 1, "kill", {{"AM_SHUTDOWN_TIMEOUT", "5s"}});
  auto deadline = std::chrono::steady_clock::now() + 40s;
  while (!has(group[0].output(), "calling") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(500ms);
  ::kill(group[1].pid, SIGKILL);
  bool ended = group.wait(60s, {0});
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status == 0);
  CHECK(has(group[0].output(), "actor 'probe.trainer' at {device: 0} (process 1) failed"));
  CHECK_FALSE(has(group[0].output(), "no error"));
}
