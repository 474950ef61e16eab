// The cluster with real processes on loopback: joining, the device directory, barriers, the store,
// desync errors, failures (kill -9, SIGSTOP, the coordinator killed), refused peers and garbage on
// the coordinator's port. Each process runs tests/programs/cluster_probe.cpp.
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <map>
#include <regex>

namespace {

using namespace std::chrono_literals;
using am::testing::cluster_env;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string probe = am::testing::test_program_dir() + "/cluster_probe";

/// Starts `count` probes playing `scenario`, each with `extra` added to its environment.
void start_cluster(process_group& group, int count, const std::vector<std::string>& scenario,
                   const std::map<std::string, std::string>& extra = {}, int port = 0) {
  if (port == 0)
    port = free_loopback_port();
  std::vector<std::string> argv{probe};
  argv.insert(argv.end(), scenario.begin(), scenario.end());
  for (int p = 0; p < count; ++p) {
    auto env = cluster_env(p, count, port);
    for (auto& [k, v] : extra)
      env[k] = v;
    group.start(argv, env);
  }
}

/// The number in "<label><number>" on some line of `text`, or -1.
long number_after(const std::string& text, const std::string& label) {
  auto at = text.find(label);
  if (at == std::string::npos)
    return -1;
  return std::stol(text.substr(at + label.size()));
}

} // namespace

TEST_CASE("three processes join from AM_* variables and see one global device list", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"join"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  const std::string all = "devices: CpuDevice(id=0)@0 CpuDevice(id=1)@0 CpuDevice(id=2)@1 CpuDevice(id=3)@1 "
                          "CpuDevice(id=4)@2 CpuDevice(id=5)@2";
  const char* local[] = {"local: 0 1", "local: 2 3", "local: 4 5"};
  const char* reach[] = {"reach: here here own own own own", "reach: own own here here own own",
                         "reach: own own own own here here"};
  const char* refused[] = {"CpuDevice(id=2) belongs to process 1 and is not addressable from process 0",
                           "CpuDevice(id=4) belongs to process 2 and is not addressable from process 1",
                           "CpuDevice(id=0) belongs to process 0 and is not addressable from process 2"};
  for (int p = 0; p < 3; ++p) {
    auto out = group[static_cast<std::size_t>(p)].output();
    CHECK(group[static_cast<std::size_t>(p)].status == 0);
    CHECK(out.find("process " + std::to_string(p) + " of 3") != std::string::npos);
    CHECK(out.find(all) != std::string::npos);
    CHECK(out.find(local[p]) != std::string::npos);
    CHECK(out.find(reach[p]) != std::string::npos);
    CHECK(out.find(std::string("upload to another process's device: ") + refused[p]) != std::string::npos);
    CHECK(out.find("barrier passed") != std::string::npos);
  }
}

TEST_CASE("the key-value store hands one process's value to the others", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"kv"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 3; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("value: hello from 0") != std::string::npos);
  }
}

TEST_CASE("many barriers in a row meet generation by generation", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 4, {"barriers", "200"});
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 4; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("barriers: 200 in us: ") != std::string::npos);
  }
}

TEST_CASE("a barrier with another name on one process is a desync on every process, and barriers go on",
          "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"barrier-desync"});
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 3; ++p) {
    auto out = group[p].output();
    CHECK(group[p].status == 0);
    CHECK(out.find("error desync_error: Barrier '") != std::string::npos);
    CHECK(out.find("' differs between processes (desync): process 0 issued barrier 'even' over processes [0, 1, 2]; "
                   "process 1 issued barrier 'odd' over processes [0, 1, 2]; process 2 issued barrier 'even'")
          != std::string::npos);
    CHECK(out.find("barriers after the desync passed") != std::string::npos);
  }
}

TEST_CASE("a barrier that times out names the process that never arrived", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"barrier-without", "2"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 2; ++p) {
    auto out = group[p].output();
    CHECK(out.find("error timeout_error: Barrier 'lonely' timed out after 1500 ms: process 2 has not arrived")
          != std::string::npos);
    auto waited = number_after(out, "waited ms: ");
    CHECK(waited >= 1400);
    CHECK(waited < 5000);
  }
  CHECK(group[2].output().find("absent process done") != std::string::npos);
}

TEST_CASE("participants that issue different collectives all get the desync error", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"desync"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 3; ++p) {
    auto out = group[p].output();
    CHECK(out.find("error desync_error: Collective 0 of communicator 'world' differs between processes") != std::string::npos);
    CHECK(out.find("process 0 issued all_reduce(sum) float32[1024] over processes [0, 1, 2]") != std::string::npos);
    CHECK(out.find("process 1 issued all_gather float32[1024]") != std::string::npos);
    CHECK(out.find("process 2 issued all_gather float32[1024]") != std::string::npos);
    CHECK(group[p].status == 0);
  }
}

TEST_CASE("a process killed during a barrier is reported to every survivor within a second", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"die-in-barrier", "2", "9"});
  REQUIRE(group.wait(30s, {0, 1}));
  INFO(group.all_output());
  REQUIRE(group.wait(10s, {2}));
  CHECK(group[2].signal == 9);
  for (std::size_t p = 0; p < 2; ++p) {
    auto out = group[p].output();
    CHECK(out.find("error process_failure_error: Barrier 'after' cannot complete: process 2 (host ")
          != std::string::npos);
    CHECK(out.find("devices 4-5) failed: its connection to the coordinator was lost") != std::string::npos);
    const auto error_at = out.find("error process_failure_error: ");
    const std::string error_line = out.substr(error_at, out.find('\n', error_at) - error_at);
    CHECK(error_line.find("(flight recorder: ") != std::string::npos);
    CHECK(error_line.find("(flight recorder: ") == error_line.rfind("(flight recorder: ")); // noted once
    CHECK(out.find("failed process 2 devices: 4 5") != std::string::npos);
    auto detected = number_after(out, "detected after ms: ");
    CHECK(detected >= 0);
    CHECK(detected < 1000);
    CHECK(out.find("later: Barrier 'later' cannot complete: process 2 (host ") != std::string::npos);
    CHECK(group[p].status == 0); // the survivors stop cleanly
  }
}

TEST_CASE("a stopped process (SIGSTOP) is reported after the heartbeat timeout", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"die-in-barrier", "2", "19"},
                {{"AM_HEARTBEAT_INTERVAL", "200ms"}, {"AM_HEARTBEAT_TIMEOUT", "2s"}, {"AM_SHUTDOWN_TIMEOUT", "5s"}});
  REQUIRE(group.wait(30s, {0, 1}));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 2; ++p) {
    auto out = group[p].output();
    CHECK(out.find("error process_failure_error: Barrier 'after' cannot complete: process 2 (host ")
          != std::string::npos);
    CHECK(out.find("devices 4-5) failed: it sent no heartbeat for 2 s (the heartbeat timeout)")
          != std::string::npos);
    auto detected = number_after(out, "detected after ms: ");
    CHECK(detected >= 1500);
    CHECK(detected < 6000);
    CHECK(group[p].status == 0);
  }
  // Resumed, the stopped process is told that it was declared failed (not that the coordinator
  // is gone), and it exits.
  ::kill(group[2].pid, SIGCONT);
  bool resumed_ended = group.wait(20s, {2});
  INFO(group[2].output());
  if (!resumed_ended)
    ::kill(group[2].pid, SIGKILL);
  CHECK(resumed_ended);
  // (Its barrier goes to the peers first, so the error may say which barrier could not complete.)
  CHECK(group[2].output().find("error process_failure_error: ") != std::string::npos);
  CHECK(group[2].output().find("This process (2) was declared failed by the coordinator: process 2 (host ")
        != std::string::npos);
  CHECK(group[2].output().find("is gone") == std::string::npos);
}

TEST_CASE("when the coordinator dies every process gets a named error and exits cleanly", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"die-in-barrier", "0", "9"}, {{"AM_SHUTDOWN_TIMEOUT", "5s"}});
  REQUIRE(group.wait(30s, {1, 2}));
  INFO(group.all_output());
  for (std::size_t p = 1; p < 3; ++p) {
    auto out = group[p].output();
    // The barrier's check among the processes names where it happened ("Barrier 'after' cannot
    // complete: ") before the coordinator's loss.
    CHECK(out.find("error process_failure_error: Barrier 'after' cannot complete: The coordinator (process 0 at "
                   "127.0.0.1:")
          != std::string::npos);
    CHECK(out.find("is gone: the connection to it was lost") != std::string::npos);
    CHECK(out.find("failed process 0 devices: 0 1") != std::string::npos);
    CHECK(number_after(out, "detected after ms: ") < 1000);
    CHECK(group[p].status == 0);
  }
}

TEST_CASE("a peer of another build is refused at join, naming both versions", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"announce", "9.9.9", "1"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 3; ++p) {
    auto out = group[p].output();
    bool named = out.find("error value_error: Process 1 runs actormesh 9.9.9 (wire protocol 2), but the coordinator "
                          "at 127.0.0.1:")
                     != std::string::npos
                 && out.find("runs actormesh 0.1.0 (wire protocol 2): every process of a cluster must run the same "
                             "build")
                        != std::string::npos;
    // The coordinator and the refused process always get the reason; a process still connecting
    // gets it while the coordinator lingers (1 s), or else hears that the coordinator went away.
    bool gone = p == 2 && out.find("error process_failure_error: The coordinator (process 0 at 127.0.0.1:")
                              != std::string::npos;
    CHECK((named || gone));
    CHECK(group[p].status == 2);
  }
}

TEST_CASE("joining times out naming the processes that never came", "[integration][cluster]") {
  process_group group;
  int port = free_loopback_port();
  for (int p = 0; p < 2; ++p) {
    auto env = cluster_env(p, 4, port);
    env["AM_JOIN_TIMEOUT"] = "2s";
    group.start({probe, "join"}, env);
  }
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(group[p].output().find("error timeout_error: Joining the cluster at 127.0.0.1:" + std::to_string(port)
                                 + " timed out after 2 s: processes 2 and 3 never joined (4 expected)")
          != std::string::npos);
    CHECK(group[p].status == 2);
  }
}

TEST_CASE("a second process with the same index is refused and the cluster forms without it", "[integration][cluster]") {
  process_group group;
  int port = free_loopback_port();
  // Process 0 stays a while after the barrier, so that the second "process 1" finds it.
  group.start({probe, "join", "3000"}, cluster_env(0, 2, port));
  group.start({probe, "join"}, cluster_env(1, 2, port));
  group.start({probe, "join"}, cluster_env(1, 2, port));
  REQUIRE(group.wait(40s));
  INFO(group.all_output());
  CHECK(group[0].status == 0);
  std::size_t refused = group[1].status == 2 ? 1 : 2;
  std::size_t joined = 3 - refused;
  CHECK(group[joined].status == 0);
  CHECK(group[joined].output().find("barrier passed") != std::string::npos);
  CHECK(group[refused].status == 2);
  // Refused either while the cluster forms (the index is taken) or after (the cluster is formed).
  auto out = group[refused].output();
  bool taken = out.find("error value_error: Process 1 has already joined (from host ") != std::string::npos;
  bool formed = out.find("error value_error: The cluster at 127.0.0.1:" + std::to_string(port)
                         + " is already formed; process 1 cannot join it again")
                != std::string::npos;
  CHECK((taken || formed));
}

TEST_CASE("a process that cannot reach the coordinator fails within its join timeout", "[integration][cluster]") {
  process_group group;
  auto env = cluster_env(1, 2, free_loopback_port());
  env["AM_JOIN_TIMEOUT"] = "1s";
  group.start({probe, "join"}, env);
  REQUIRE(group.wait(20s));
  INFO(group.all_output());
  CHECK(group[0].status == 2);
  CHECK(group[0].output().find("error timeout_error: Process 1 could not reach the coordinator at 127.0.0.1:")
        != std::string::npos);
}

TEST_CASE("garbage and oversized frames on the coordinator's port leave it serving", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 2, {"serve-after-garbage"});
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  CHECK(group[0].output().find("garbage connections made: 4") != std::string::npos);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(group[p].output().find("still serving") != std::string::npos);
    CHECK(group[p].status == 0);
  }
}

TEST_CASE("a global array over every process: local jit, cross-process sum and resharding", "[integration][cluster]") {
  for (int n : {2, 4}) {
    process_group group;
    start_cluster(group, n, {"arrays"});
    REQUIRE(group.wait(60s));
    INFO(group.all_output());
    for (std::size_t p = 0; p < static_cast<std::size_t>(n); ++p) {
      auto out = group[p].output();
      CHECK(group[p].status == 0);
      CHECK(out.find("fully addressable: no") != std::string::npos);
      CHECK(out.find("local shards of jit: ok") != std::string::npos);
      CHECK(out.find("error runtime_error: Fetching value for `jax.Array` that spans non-addressable (non process "
                     "local) devices is not possible.")
            != std::string::npos);
      CHECK(out.find("sum: 16384.0") != std::string::npos);            // sum of 2k+1 for k < 128
      CHECK(out.find("replicated[15, 7]: [[255.]]") != std::string::npos); // 2*127+1, from another process
    }
  }
}

TEST_CASE("actormesh launch runs a cluster program with prefixed output", "[integration][cluster]") {
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 3 --cpu-devices 1 -- " + probe + " join", 60);
  INFO(r.output);
  CHECK(r.status == 0);
  for (int p = 0; p < 3; ++p) {
    CHECK(r.output.find("[" + std::to_string(p) + "] process " + std::to_string(p) + " of 3") != std::string::npos);
    CHECK(r.output.find("[" + std::to_string(p) + "] devices: CpuDevice(id=0)@0 CpuDevice(id=1)@1 CpuDevice(id=2)@2")
          != std::string::npos);
    CHECK(r.output.find("[" + std::to_string(p) + "] barrier passed") != std::string::npos);
  }
}

TEST_CASE("actormesh launch stops the cluster when one process is killed", "[integration][cluster]") {
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 3 --cpu-devices 1 --grace 2 -- " + probe
                                      + " die-in-barrier 1 9",
                                    60);
  INFO(r.output);
  CHECK(r.status == 137);
  CHECK(r.output.find("actormesh launch: process 1 was killed by signal 9") != std::string::npos);
}

TEST_CASE("the cluster tour runs under actormesh launch -n 4 --cpu-devices 2", "[integration][cluster]") {
  auto tour = am::testing::binary_dir() + "/demos/cluster_tour";
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 4 --cpu-devices 2 -- " + tour, 120);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("[0] The cluster: 4 processes, 8 devices") != std::string::npos);
  CHECK(r.output.find("[0]   CpuDevice(id=7)  process 3") != std::string::npos);
  CHECK(r.output.find("[0] x = Array(float32[8192,8192], sharding=NamedSharding(mesh=Mesh('x': 4, 'y': 2), "
                      "spec=P('x', 'y')))")
        != std::string::npos);
  CHECK(r.output.find("[0] │  CPU 6   │  CPU 7   │") != std::string::npos);
  for (int p = 0; p < 4; ++p) {
    auto tag = "[" + std::to_string(p) + "] process " + std::to_string(p);
    CHECK(r.output.find(tag + " ran complex_computation on its shards") != std::string::npos);
    CHECK(r.output.find(tag + ": all-reduced sum 134171168.0") != std::string::npos);
    CHECK(r.output.find(tag + " passed the barrier") != std::string::npos);
  }
  CHECK(r.output.find("DISAGREE") == std::string::npos);
}

namespace {

/// Starts three processes all-reducing `elements` floats in a loop until process 2 raises
/// `signal` in the middle of one; checks that both survivors fail that all-reduce with a
/// process_failure_error naming process 2 `because` (how it was found out), between `min_ms` and
/// `max_ms` after it began, and that the communicator refuses what follows. Returns with process 2
/// ended (a stopped one is resumed first, and told it was declared failed).
/// The last of `processes` processes gets `signal` in the middle of an all-reduce of `elements`
/// floats; every survivor's fails naming it, `because` and after min_ms to max_ms.
void check_failure_in_collective(int signal, std::size_t elements, const std::string& because, long min_ms,
                                 long max_ms, int processes = 3) {
  process_group group;
  std::map<std::string, std::string> env{{"AM_CPU_DEVICES", "1"}};
  if (signal == SIGSTOP)
    env.insert({{"AM_HEARTBEAT_INTERVAL", "200ms"}, {"AM_HEARTBEAT_TIMEOUT", "2s"}, {"AM_SHUTDOWN_TIMEOUT", "5s"}});
  const int victim = processes - 1;
  const auto victim_at = static_cast<std::size_t>(victim);
  start_cluster(group, processes, {"die-in-collective", std::to_string(victim), std::to_string(signal),
                                   std::to_string(elements)}, env);
  std::vector<std::size_t> survivors;
  for (std::size_t p = 0; p < victim_at; ++p)
    survivors.push_back(p);
  REQUIRE(group.wait(120s, survivors));
  INFO(group.all_output());
  if (signal == SIGSTOP)
    ::kill(group[victim_at].pid, SIGCONT);
  bool victim_ended = group.wait(20s, {victim_at});
  if (!victim_ended)
    ::kill(group[victim_at].pid, SIGKILL);
  CHECK(victim_ended);
  const std::string victim_text = std::to_string(victim);
  if (signal == SIGKILL)
    CHECK(group[victim_at].signal == 9);
  else // resumed: its own all-reduce fails, and it hears that it was declared failed
    CHECK(group[victim_at].output().find("This process (" + victim_text + ") was declared failed by the coordinator")
          != std::string::npos);
  const std::string shape = "all_reduce(sum) float32[" + std::to_string(elements) + "] (step ";
  for (std::size_t p : survivors) {
    auto out = group[p].output();
    CHECK(out.find("error process_failure_error: " + shape) != std::string::npos);
    CHECK(out.find("of communicator 'dying', rank " + std::to_string(p) + " of " + std::to_string(processes)
                   + ", process " + std::to_string(p) + ")")
          != std::string::npos);
    CHECK(out.find("process " + victim_text + " (host ") != std::string::npos); // names the dead one
    CHECK(out.find(because) != std::string::npos);
    auto failed = number_after(out, "failed after ms: ");
    CHECK(failed >= min_ms);
    CHECK(failed < max_ms);
    CHECK(out.find("later: Communicator 'dying' is broken and refuses further operations") != std::string::npos);
    CHECK(group[p].status == 0); // no SIGPIPE, a clean stop
  }
}

const std::string lost_connection = "failed: its connection to the coordinator was lost";
const std::string no_heartbeat = "failed: it sent no heartbeat for 2 s (the heartbeat timeout)";

} // namespace

// 4 Mi floats go through Gloo; 256 travel with their check over shared memory (carry_limit).
TEST_CASE("a process killed in the middle of an all-reduce fails the collective on every survivor", "[integration][cluster]") {
  check_failure_in_collective(SIGKILL, 4u << 20, lost_connection, 0, 5000);
}

TEST_CASE("a process killed in the middle of a small all-reduce fails it on every survivor within a second", "[integration][cluster]") {
  SECTION("1 KiB") { check_failure_in_collective(SIGKILL, 256, lost_connection, 0, 1000); }
  // 64 KiB a rank still travels with the check; UCX would move it by rendezvous, reading the dead
  // peer's memory, had the mesh not turned that off (shm_mesh.cpp).
  SECTION("64 KiB") { check_failure_in_collective(SIGKILL, 16384, lost_connection, 0, 1000); }
}

TEST_CASE("a process stopped (SIGSTOP) in the middle of an all-reduce fails it after the heartbeat timeout", "[integration][cluster]") {
  SECTION("a large one, through Gloo") { check_failure_in_collective(SIGSTOP, 4u << 20, no_heartbeat, 1500, 6000); }
  SECTION("a small one, over shared memory") { check_failure_in_collective(SIGSTOP, 256, no_heartbeat, 1500, 6000); }
}

// A send/recv between two processes of this machine moves over shared memory (mesh_transfer.hpp):
// 64 MiB each, process 1 sending to process 2 (process 0, the coordinator, waits at a barrier).
// Whichever side dies, the other fails with the named process, as the collectives do; a stopped one
// is declared failed after the heartbeat timeout.
TEST_CASE("a process killed or stopped in the middle of a 64 MiB transfer over shared memory fails the other side",
          "[integration][cluster]") {
  struct scenario {
    const char* what;
    int victim;
    int signal;
  };
  const std::vector<scenario> scenarios{{"the sender killed", 1, SIGKILL},
                                        {"the receiver killed", 2, SIGKILL},
                                        {"the receiver stopped", 2, SIGSTOP}};
  for (const auto& sc : scenarios) {
    INFO(sc.what);
    process_group group;
    std::map<std::string, std::string> env{{"AM_CPU_DEVICES", "1"}};
    if (sc.signal == SIGSTOP)
      env.insert({{"AM_HEARTBEAT_INTERVAL", "200ms"}, {"AM_HEARTBEAT_TIMEOUT", "2s"}, {"AM_SHUTDOWN_TIMEOUT", "5s"}});
    start_cluster(group, 3, {"die-in-transfer", std::to_string(sc.victim), std::to_string(sc.signal), "64"}, env);
    const auto victim = static_cast<std::size_t>(sc.victim);
    const std::size_t survivor = 3 - victim;
    REQUIRE(group.wait(120s, {0, survivor}));
    if (sc.signal == SIGSTOP)
      ::kill(group[victim].pid, SIGCONT);
    bool victim_ended = group.wait(20s, {victim});
    if (!victim_ended)
      ::kill(group[victim].pid, SIGKILL);
    INFO(group.all_output());
    CHECK(victim_ended);
    const std::string victim_text = std::to_string(sc.victim);
    for (std::size_t p : {std::size_t{0}, survivor}) {
      auto out = group[p].output();
      CHECK(out.find("error process_failure_error: ") != std::string::npos);
      CHECK(out.find("process " + victim_text + " (host ") != std::string::npos); // names the lost one
      CHECK(out.find(sc.signal == SIGKILL ? lost_connection : no_heartbeat) != std::string::npos);
      CHECK(group[p].status == 0);
    }
    auto out = group[survivor].output();
    auto failed = number_after(out, "failed after ms: ");
    CHECK(failed >= (sc.signal == SIGKILL ? 0 : 1500));
    CHECK(failed < (sc.signal == SIGKILL ? 1000 : 6000));
    CHECK(out.find("later: Communicator 'moving' is broken and refuses further operations") != std::string::npos);
  }
}

// Combined on every device, a sum's partials would go from every process to every other one:
// 8 * 7 transfers, each process pair with a communicator of its own (at 32 processes the cluster
// tour never finished). Combined once, process 0 takes 7 partials in and sends 7 sums out.
TEST_CASE("a sum over every process moves each partial once and the result once to each process",
          "[integration][cluster]") {
  process_group group;
  start_cluster(group, 8, {"sum-transfers"}, {{"AM_CPU_DEVICES", "1"}});
  REQUIRE(group.wait(120s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 8; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("sum: 512") != std::string::npos);
    CHECK(number_after(group[p].output(), "transfers: ") == (p == 0 ? 14 : 2));
  }
}

// Issue 24, item 3: the scale this machine can hold (2 cores for 32 processes).
TEST_CASE("32 processes on one machine join, pass barriers, agree on every collective and detect a killed one",
          "[integration][cluster][scale]") {
  const std::map<std::string, std::string> one_device{{"AM_CPU_DEVICES", "1"}};
  SECTION("join and 20 barriers") {
    process_group group;
    start_cluster(group, 32, {"barriers", "20"}, one_device);
    REQUIRE(group.wait(120s));
    INFO(group.all_output());
    for (std::size_t p = 0; p < 32; ++p) {
      CHECK(group[p].status == 0);
      CHECK(group[p].output().find("process " + std::to_string(p) + " of 32") != std::string::npos);
      CHECK(number_after(group[p].output(), "barriers: 20 in us: ") > 0);
    }
  }
  SECTION("every collective, carried with its check and through Gloo") {
    for (const std::string count : {"1003", "40003"}) {
      INFO(count << " float64 each");
      process_group group;
      start_cluster(group, 32, {"collectives", count}, one_device);
      REQUIRE(group.wait(120s));
      INFO(group.all_output());
      for (std::size_t p = 0; p < 32; ++p) {
        CHECK(group[p].status == 0);
        CHECK(group[p].output().find("collectives agree with the host") != std::string::npos);
      }
    }
  }
  SECTION("a process killed in a small all-reduce") {
    check_failure_in_collective(SIGKILL, 256, lost_connection, 0, 5000, 32);
  }
}

TEST_CASE("an operation waiting for a dead process's shard fails at once, naming it", "[integration][cluster]") {
  process_group group;
  start_cluster(group, 3, {"die-before-transfer", "2"});
  REQUIRE(group.wait(60s, {0, 1}));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 2; ++p) {
    auto out = group[p].output();
    CHECK(out.find("error process_failure_error: ") != std::string::npos);
    // It names the dead process, or the survivor that stopped (after its own failure) before
    // sending its part: either way a named process, at once, instead of a hang.
    // ("process 2 (host ...) failed: ...", from the collective or from the failure notice,
    // whichever reaches the waiting call first.)
    bool dead = out.find("process 2 (host ") != std::string::npos;
    bool left = out.find("has left the cluster (its runtime stopped)") != std::string::npos;
    CHECK((dead || left));
    auto failed = number_after(out, "failed after ms: ");
    CHECK(failed >= 0);
    CHECK(failed < 5000);
    CHECK(group[p].status == 0);
  }
}

// 1003 float64 per process travel with the check over shared memory; 40,003 (313 KiB) go through Gloo.
TEST_CASE("every collective across real processes agrees with the host computation", "[integration][cluster]") {
  for (int n : {2, 3, 4, 8}) {
    for (const std::string count : {"1003", "40003"}) {
      INFO(n << " processes, " << count << " float64 each");
      process_group group;
      start_cluster(group, n, {"collectives", count}, {{"AM_CPU_DEVICES", "1"}});
      REQUIRE(group.wait(60s));
      INFO(group.all_output());
      for (std::size_t p = 0; p < static_cast<std::size_t>(n); ++p) {
        CHECK(group[p].status == 0);
        CHECK(group[p].output().find("collectives agree with the host") != std::string::npos);
      }
    }
  }
}

TEST_CASE("large collectives agree with the host when one process may not read its peers' memory (all move through "
          "Gloo alike)",
          "[integration][cluster]") {
  // 40003 float64 a process is past the carry limit: the ranks read each other's memory, except
  // that process 1 may not (AM_SHM_SINGLE_COPY=0, as a security module would refuse it); every
  // process learns it in the same phase and moves that collective and the later ones through Gloo.
  const int n = 3;
  process_group group;
  const int port = free_loopback_port();
  for (int p = 0; p < n; ++p) {
    auto env = cluster_env(p, n, port);
    env["AM_CPU_DEVICES"] = "1";
    if (p == 1)
      env["AM_SHM_SINGLE_COPY"] = "0";
    group.start({probe, "collectives", "40003"}, env);
  }
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < static_cast<std::size_t>(n); ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("collectives agree with the host") != std::string::npos);
  }
}

TEST_CASE("a process that stops first waits for the others, longer than the heartbeat timeout", "[integration][cluster]") {
  process_group group;
  int port = free_loopback_port();
  // Warnings shown: a leave that gave up would say "stopping without every process's agreement".
  std::map<std::string, std::string> fast_heartbeats{
    {"AM_HEARTBEAT_INTERVAL", "200ms"}, {"AM_HEARTBEAT_TIMEOUT", "2s"}, {"AM_LOG", "warning"}};
  auto env0 = cluster_env(0, 2, port, 1);
  auto env1 = cluster_env(1, 2, port, 1);
  for (auto& [k, v] : fast_heartbeats) {
    env0[k] = v;
    env1[k] = v;
  }
  group.start({probe, "join", "4000"}, env0); // stays 4 s after the barrier
  auto start = std::chrono::steady_clock::now();
  group.start({probe, "join"}, env1);
  REQUIRE(group.wait(30s, {1}));
  auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE(group.wait(30s, {0}));
  INFO(group.all_output());
  CHECK(group[0].status == 0);
  CHECK(group[1].status == 0);
  CHECK(waited >= 3500ms); // process 1 stayed until process 0 stopped
  CHECK(group[1].output().find("is gone") == std::string::npos);
  CHECK(group[1].output().find("stopping without every process's agreement") == std::string::npos);
}

TEST_CASE("actormesh info under launch shows the cluster it joined", "[integration][cluster]") {
  auto r = am::testing::run_command(am::testing::tool_path() + " launch -n 2 --cpu-devices 1 -- " + am::testing::tool_path()
                                      + " info --no-gpus",
                                    60);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("[1]   process          1 of 2") != std::string::npos);
  CHECK(r.output.find("[1]   coordinator      127.0.0.1:") != std::string::npos);
  CHECK(r.output.find("(from AM_* environment; listening on 127.0.0.1 when process 0)") != std::string::npos);
  CHECK(r.output.find("[0]   CpuDevice(id=1)    process 1  cpu:0") != std::string::npos);
}
