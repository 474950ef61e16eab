// Single-controller mode with real processes on loopback: one controller (tests/programs/
// controller_probe.cpp, AM_ROLE=controller) drives workers started as `actormesh worker`; arrays
// whose shards live in the workers are built, computed, resharded and read back, each caller's
// order holds across the network, hostile requests are refused while the worker keeps serving, and
// a killed worker fails the controller's calls instead of hanging them.
#include "support/build_paths.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <regex>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string controller = am::testing::test_program_dir() + "/controller_probe";

/// Starts the controller (index 0 of `group`) with `scenario`, then `workers` workers (1..).
void start_single_controller(process_group& group, int workers, const std::vector<std::string>& scenario,
                             const std::map<std::string, std::string>& extra = {},
                             const std::map<std::string, std::string>& worker_extra = {}) {
  int port = free_loopback_port();
  int count = workers + 1;
  std::vector<std::string> argv{controller};
  argv.insert(argv.end(), scenario.begin(), scenario.end());
  auto env = cluster_env(0, count, port);
  env["AM_ROLE"] = "controller";
  for (auto& [k, v] : extra)
    env[k] = v;
  group.start(argv, env);
  std::map<std::string, std::string> worker_env{{"AM_JOIN_TIMEOUT", "20s"}, {"AM_LOG", "error"}};
  for (auto& [k, v] : worker_extra)
    worker_env[k] = v;
  for (int p = 1; p < count; ++p)
    group.start({am::testing::tool_path(), "worker", "--coordinator", "127.0.0.1:" + std::to_string(port), "--process-id",
                 std::to_string(p), "--num-processes", std::to_string(count), "--cpu-devices", "2"},
                worker_env);
}

/// The number after `label` in `text` (-1 when absent).
double number_after(const std::string& text, const std::string& label) {
  auto at = text.find(label);
  if (at == std::string::npos)
    return -1;
  return std::stod(text.substr(at + label.size()));
}

} // namespace

TEST_CASE("a controller runs device_put, operations, jit, resharding and to_host on workers' shards",
          "[integration][single-controller]") {
  process_group group;
  // Warnings shown: a stop that waited out the shutdown timeout says "stopping without every
  // process's agreement" (a shard still queued for a worker at the controller's stop once left the
  // worker waiting for it, and the controller's leave for the worker, 30 s).
  start_single_controller(group, 3, {"ops"}, {{"AM_LOG", "warning"}}, {{"AM_LOG", "warning"}});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(group[0].status == 0);
  CHECK(group.all_output().find("stopping without every process's agreement") == std::string::npos);
  CHECK(out.find("controller of 4 processes, 8 devices") != std::string::npos);
  CHECK(out.find("reach: here here link link link link link link") != std::string::npos);
  CHECK(out.find("fully addressable: yes, shards here: 8") != std::string::npos);
  CHECK(out.find("shards on processes: 0 0 1 1 2 2 3 3") != std::string::npos);
  CHECK(number_after(out, "round trip max difference: ") == 0);
  CHECK(number_after(out, "eager x + x max difference: ") == 0);
  CHECK(number_after(out, "jit max difference: ") == Approx(0).margin(1e-5));
  CHECK(number_after(out, "reshard max difference: ") == Approx(0).margin(1e-5));
  CHECK(number_after(out, "transpose max difference: ") == Approx(0).margin(1e-5));
  CHECK(number_after(out, "sum relative difference: ") == Approx(0).margin(1e-5));
  CHECK(out.find("ops done") != std::string::npos);
  for (std::size_t w = 1; w < group.size(); ++w) {
    CHECK(group[w].status == 0);
    CHECK(group[w].output().find("the controller stopped; exiting") != std::string::npos);
  }
}

TEST_CASE("each controller thread's calls to a worker run in the order issued", "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 2, {"order", "6", "150"});
  bool ended = group.wait(90s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(group[0].status == 0);
  CHECK(out.find("order wrong values: 0") != std::string::npos);
  CHECK(out.find("chain value: 20") != std::string::npos);
}

TEST_CASE("a worker refuses malformed and hostile requests and keeps serving", "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 1, {"garbage"});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status == 0);
  CHECK(group[0].output().find("worker still serves: yes") != std::string::npos);
  CHECK(group[1].status == 0);
}

TEST_CASE("a worker's device refuses an input that lives in another process", "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 1, {"misuse"});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(out.find("error value_error: execute: input 0 is not a shard of process 1 (it lives in this process)")
        != std::string::npos);
  CHECK(out.find("barrier error runtime_error: wait_at_barrier('controller alone') is a multi-controller operation")
        != std::string::npos);
}

TEST_CASE("a killed worker fails the controller's calls at once, and the other workers go on",
          "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 2, {"kill"}, {{"AM_SHUTDOWN_TIMEOUT", "5s"}});
  auto deadline = std::chrono::steady_clock::now() + 40s;
  while (group[0].output().find("issuing") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  std::this_thread::sleep_for(300ms);
  ::kill(group[1].pid, SIGKILL);
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(std::regex_search(out, std::regex("error process_failure_error: .*[Pp]rocess 1")));
  CHECK(out.find("other worker after the failure: 1") != std::string::npos);
  CHECK(group[0].status == 0);
  CHECK(group[2].status == 0);
}

TEST_CASE("stopping the controller while threads call workers fails their calls, never hangs",
          "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 2, {"stop-in-flight"});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(group[0].status == 0);
  CHECK(out.find("completed some, refused threads 4, other errors 0") != std::string::npos);
  CHECK(group[1].status == 0);
  CHECK(group[2].status == 0);
}

TEST_CASE("when the controller dies its workers get a named error and exit", "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 2, {"hold"});
  auto deadline = std::chrono::steady_clock::now() + 40s;
  while (group[0].output().find("holding") == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  ::kill(group[0].pid, SIGKILL);
  bool ended = group.wait(30s);
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t w = 1; w < group.size(); ++w) {
    CHECK(group[w].status == 2);
    CHECK(group[w].output().find("The coordinator (process 0 at 127.0.0.1:") != std::string::npos);
    CHECK(group[w].output().find("did not stop within") == std::string::npos); // not the watchdog's exit
  }
}

TEST_CASE("a worker whose controller dies before the cluster forms exits with the coordinator's error",
          "[integration][single-controller]") {
  // The controller waits for two workers; only one comes. Killed then, it leaves that worker inside
  // its runtime's start with a call server already spawned: the start must fail with the reason
  // (it used to hang in the actor system's destructor, waiting for that actor).
  process_group group;
  int port = free_loopback_port();
  auto env = cluster_env(0, 3, port);
  env["AM_ROLE"] = "controller";
  env["AM_LOG"] = "info"; // the supervisor's "process 1 joined" line
  group.start({controller, "hold"}, env);
  group.start({am::testing::tool_path(), "worker", "--coordinator", "127.0.0.1:" + std::to_string(port), "--process-id", "1",
               "--num-processes", "3", "--cpu-devices", "2"},
              {{"AM_JOIN_TIMEOUT", "60s"}, {"AM_LOG", "error"}});
  auto deadline = std::chrono::steady_clock::now() + 40s;
  while (group[0].output().find("supervisor: process 1 joined") == std::string::npos
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  INFO(group.all_output());
  REQUIRE(group[0].output().find("supervisor: process 1 joined") != std::string::npos);
  ::kill(group[0].pid, SIGKILL);
  REQUIRE(group.wait(20s)); // well inside the worker's 60 s join timeout
  CHECK(group[1].status == 2);
  CHECK(group[1].output().find("The coordinator (process 0 at 127.0.0.1:") != std::string::npos);
}

TEST_CASE("a peer cannot join a controller's cluster: every process is told why", "[integration][single-controller]") {
  process_group group;
  int port = free_loopback_port();
  auto env = cluster_env(0, 2, port);
  env["AM_ROLE"] = "controller";
  group.start({controller, "ops"}, env);
  group.start({am::testing::test_program_dir() + "/cluster_probe", "join"}, cluster_env(1, 2, port));
  bool ended = group.wait(40s);
  INFO(group.all_output());
  REQUIRE(ended);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(group[p].status != 0);
    CHECK(group[p].output().find("Process 1 joined as a peer, but process 0 is a controller") != std::string::npos);
  }
}

TEST_CASE("shards the controller drops are freed on the worker", "[integration][single-controller]") {
  // The worker may hold 8 MiB; the controller makes 200 arrays of 1 MiB there one after another.
  // Without the releases the 9th would fail with RESOURCE_EXHAUSTED.
  process_group group;
  start_single_controller(group, 1, {"churn", "200"}, {}, {{"AM_CPU_MEMORY_LIMIT", "8M"}});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  CHECK(group[0].status == 0);
  CHECK(group[0].output().find("churned 200 arrays") != std::string::npos);
}

TEST_CASE("large shards move through the data plane, and a worker's failure to hold one is reported",
          "[integration][single-controller]") {
  process_group group;
  start_single_controller(group, 3, {"bulk"}, {}, {{"AM_CPU_MEMORY_LIMIT", "6M"}});
  bool ended = group.wait(60s);
  INFO(group.all_output());
  REQUIRE(ended);
  auto out = group[0].output();
  CHECK(group[0].status == 0);
  CHECK(number_after(out, "bulk round trip max difference: ") == 0);
  CHECK(number_after(out, "bulk jit max difference: ") == 0);
  CHECK(out.find("error out_of_memory_error: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8388608 bytes")
        != std::string::npos);
  CHECK(out.find("moved error out_of_memory_error: RESOURCE_EXHAUSTED") != std::string::npos);
  // Bounded well below the collective timeout (300 s), which a lost error would wait for.
  CHECK(number_after(out, "moved error after ") < 60000);
}
