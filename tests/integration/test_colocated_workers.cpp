// Colocated functions and classes running in worker processes (single-controller mode), with real
// processes on loopback: the controller and its workers all run tests/programs/
// colocated_workers_probe.cpp (the same binary, so every process knows the registered names); the
// controller calls on the workers' CPU devices and checks where the code ran, the order of each
// thread's calls, the lifetime of objects, the errors, and a worker killed mid-call.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"
#include "support/single_controller.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <regex>
#include <thread>

namespace {

using namespace std::chrono_literals;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/colocated_workers_probe";

/// Starts the controller (index 0) playing `scenario`, then `workers` workers of the same binary.
void start_cluster(process_group& group, int workers, const std::string& scenario,
                   const std::map<std::string, std::string>& extra = {}) {
  am::testing::start_single_controller(group, probe, workers, scenario, extra);
}

/// Plays `scenario` on a controller with `workers` workers, requires every process to end within
/// `timeout` and the controller to exit 0, and returns the controller's output.
std::string play(process_group& group, int workers, const std::string& scenario, std::chrono::seconds timeout) {
  start_cluster(group, workers, scenario);
  bool ended = group.wait(timeout);
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status == 0);
  return group[0].output();
}

} // namespace

TEST_CASE("a colocated function runs in the worker that owns its devices, first synchronously, then asynchronously",
          "[integration][colocated-workers]") {
  process_group group;
  auto out = play(group, 2, "functions", 60s);
  INFO(group.all_output());
  CHECK(out.find("first call: [1. 2. 3. 4.] on processes 1 1") != std::string::npos); // ran in process 1
  CHECK(out.find("known signatures: 1") != std::string::npos);
  CHECK(out.find("chained calls: [3. 4. 5. 6.]") != std::string::npos);
  CHECK(out.find("specialized: [1. 2. 3. 4.]") != std::string::npos);
  CHECK(out.find("sum of chained: 18.0") != std::string::npos);
  CHECK(out.find("void call done") != std::string::npos);
  CHECK(group[1].output().find("worker 1 logs [0. 1. 2. 3.]") != std::string::npos);
  CHECK(group[2].output().find("logs") == std::string::npos);
  for (std::size_t w = 1; w < group.size(); ++w)
    CHECK(group[w].status == 0);
}

TEST_CASE("colocated calls from two controller threads run concurrently in a worker, each thread's in order",
          "[integration][colocated-workers]") {
  process_group group;
  auto out = play(group, 1, "concurrency", 90s);
  INFO(group.all_output());
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("two 1-second calls from two threads took ([0-9.]+) s")));
  CHECK(std::stod(m[1]) < 1.8); // one after the other would be 2 s
  CHECK(out.find("order violations: 0") != std::string::npos);
  auto worker = group[1].output();
  for (int t = 0; t < 4; ++t) {
    CHECK(worker.find("counter t" + std::to_string(t) + " created in process 1") != std::string::npos);
    CHECK(worker.find("counter t" + std::to_string(t) + " destroyed") != std::string::npos);
  }
}

TEST_CASE("a colocated object lives in the worker: built at the first call, destroyed after the last wrapper, "
          "errors reach every caller",
          "[integration][colocated-workers]") {
  process_group group;
  auto out = play(group, 1, "objects", 60s);
  INFO(group.all_output());
  CHECK(out.find("calls: [0. 0.] [1. 1.] [2. 2.]") != std::string::npos);
  // The constructor's exception reaches both calls, with its kind and text.
  std::regex broken("error value_error: broken\\(7\\) refuses to be built");
  CHECK(std::distance(std::sregex_iterator(out.begin(), out.end(), broken), std::sregex_iterator()) == 2);
  CHECK(std::regex_search(out, std::regex("error value_error: .*cannot be built in a worker process")));
  CHECK(out.find("opaque on the controller's devices: [3. 4.]") != std::string::npos);
  // An am::array constructor argument is rebuilt in the worker, on the call's device there.
  CHECK(out.find("array argument in the worker: [10. 21.]") != std::string::npos);
  auto worker = group[1].output();
  CHECK(std::regex_search(worker, std::regex("offset_by built on CpuDevice\\(id=[0-9]+\\) in process 1")));
  auto created = worker.find("counter solo created in process 1");
  auto destroyed = worker.find("counter solo destroyed");
  CHECK(created != std::string::npos);
  CHECK(destroyed != std::string::npos);
  CHECK(created < destroyed);
  CHECK(worker.find("broken built") == std::string::npos);
}

TEST_CASE("a colocated call on the devices of two workers runs in each over its own part",
          "[integration][colocated-workers]") {
  process_group group;
  auto out = play(group, 2, "spanning", 60s);
  INFO(group.all_output());
  CHECK(out.find("spanning first call: [1. 2. 3. 4. 6. 7. 8. 9.] on processes 1 1 2 2") != std::string::npos);
  CHECK(out.find("spanning second call: [ 2.  3.  4.  5.  8.  9. 10. 11.]") != std::string::npos);
  CHECK(out.find("error value_error: process 2 refuses") != std::string::npos); // one worker's error fails the call
  CHECK(out.find("after the failed call: [1. 2. 3. 4. 6. 7. 8. 9.]") != std::string::npos);
  CHECK(std::regex_search(out, std::regex("error value_error: .*mix the controller's own devices with workers'")));
}

TEST_CASE("a worker killed during a colocated call fails it on the controller, never hangs",
          "[integration][colocated-workers]") {
  process_group group;
  start_cluster(group, 1, "kill", {{"AM_SHUTDOWN_TIMEOUT", "5s"}});
  auto deadline = std::chrono::steady_clock::now() + 40s;
  while (group[0].output().find("calling") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(1500ms);
  ::kill(group[1].pid, SIGKILL);
  bool ended = group.wait(60s, {0});
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(std::regex_search(out, std::regex("error process_failure_error: .*[Pp]rocess 1")));
  CHECK(group[0].status == 0);
}

TEST_CASE("controller threads that come and go leave no lane threads behind in the worker",
          "[integration][colocated-workers]") {
  process_group group;
  auto out = play(group, 1, "threads", 90s);
  INFO(group.all_output());
  std::smatch m;
  REQUIRE(std::regex_search(out, m, std::regex("worker threads before ([0-9]+), after 60 controller threads ([0-9]+)")));
  // Each thread's lanes retire when it ends; without that the worker would hold 60 more threads.
  CHECK(std::stoi(m[2]) - std::stoi(m[1]) < 10);
}
