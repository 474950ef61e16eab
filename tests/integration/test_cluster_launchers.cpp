// Clusters that job launchers start: the variables of Slurm, torchrun, a Kubernetes Indexed Job and
// Open MPI's mpirun alone make a cluster, and two `actormesh launch` launchers, one a node, make one
// cluster through --rdzv. Each process runs tests/programs/cluster_probe.cpp on loopback.
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/process_group.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>

namespace {

using namespace std::chrono_literals;
using am::testing::free_loopback_port;
using am::testing::process_group;

const std::string launcher_probe = am::testing::test_program_dir() + "/cluster_probe";

/// Starts two cluster probes ("join") with only `launcher_env(p, port)` (and one CPU device each)
/// telling them about the cluster, `port` a free loopback port, and checks that they formed one.
void check_launcher_variables_make_a_cluster(
  const std::function<std::map<std::string, std::string>(int, int)>& launcher_env) {
  process_group group;
  const int port = free_loopback_port();
  for (int p = 0; p < 2; ++p) {
    auto env = launcher_env(p, port);
    env["AM_CPU_DEVICES"] = "1";
    env["AM_LOG"] = "error";
    group.start({launcher_probe, "join"}, env);
  }
  REQUIRE(group.wait(30s));
  INFO(group.all_output());
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(group[p].status == 0);
    CHECK(group[p].output().find("process " + std::to_string(p) + " of 2") != std::string::npos);
    CHECK(group[p].output().find("devices: CpuDevice(id=0)@0 CpuDevice(id=1)@1") != std::string::npos);
  }
}

} // namespace

TEST_CASE("Slurm's variables alone make a cluster", "[integration][cluster]") {
  check_launcher_variables_make_a_cluster([](int p, int port) -> std::map<std::string, std::string> {
    return {{"SLURM_PROCID", std::to_string(p)},
            {"SLURM_NTASKS", "2"},
            {"SLURM_STEP_NODELIST", "localhost"},
            {"SLURM_JOB_ID", "4242"},
            {"AM_COORDINATOR_PORT", std::to_string(port)}};
  });
}

TEST_CASE("torchrun's variables alone make a cluster, its coordinator on the port after MASTER_PORT",
          "[integration][cluster]") {
  check_launcher_variables_make_a_cluster([](int p, int port) -> std::map<std::string, std::string> {
    return {{"RANK", std::to_string(p)},
            {"WORLD_SIZE", "2"},
            {"LOCAL_RANK", std::to_string(p)},
            {"MASTER_ADDR", "127.0.0.1"},
            {"MASTER_PORT", std::to_string(port - 1)}}; // the coordinator takes MASTER_PORT + 1
  });
}

TEST_CASE("a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with its manifest's AM_NUM_PROCESSES and AM_COORDINATOR "
          "makes a cluster",
          "[integration][cluster]") {
  check_launcher_variables_make_a_cluster([](int p, int port) -> std::map<std::string, std::string> {
    return {{"JOB_COMPLETION_INDEX", std::to_string(p)},
            {"AM_NUM_PROCESSES", "2"},
            {"AM_COORDINATOR", "127.0.0.1:" + std::to_string(port)}};
  });
}

TEST_CASE("two launchers, one a node, make one cluster of 4 processes through --rdzv", "[integration][cluster]") {
  process_group group;
  const auto rdzv = "127.0.0.1:" + std::to_string(free_loopback_port());
  for (int node = 0; node < 2; ++node)
    group.start({am::testing::tool_path(), "launch", "-n", "2", "--nnodes", "2", "--node-rank", std::to_string(node),
                 "--rdzv", rdzv, "--cpu-devices", "1", "--timeout", "50", "--", launcher_probe, "join"},
                {{"AM_CLUSTER_TOKEN", "one-secret-for-both-nodes"}, {"AM_LOG", "error"}});
  REQUIRE(group.wait(60s));
  INFO(group.all_output());
  for (std::size_t node = 0; node < 2; ++node) {
    CHECK(group[node].status == 0);
    for (int local = 0; local < 2; ++local) {
      const auto p = std::to_string(2 * static_cast<int>(node) + local);
      CHECK(group[node].output().find("[" + p + "] process " + p + " of 4") != std::string::npos);
      CHECK(group[node].output().find("[" + p + "] barrier passed") != std::string::npos);
    }
  }
}

TEST_CASE("Open MPI's variables alone make a cluster (mpirun, when installed)", "[integration][cluster]") {
  if (am::testing::run_command("sh -c 'command -v mpirun'", 10).status != 0) {
    WARN("skipped: mpirun is not installed");
    return;
  }
  int port = free_loopback_port();
  // mpirun sets OMPI_COMM_WORLD_RANK/SIZE; the coordinator stays on loopback through AM_COORDINATOR.
  auto r = am::testing::run_command("mpirun --allow-run-as-root --oversubscribe -np 2 -x AM_COORDINATOR=127.0.0.1:"
                                      + std::to_string(port) + " -x AM_CPU_DEVICES=1 -x AM_LOG=error " + launcher_probe + " join",
                                    60);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("process 0 of 2") != std::string::npos);
  CHECK(r.output.find("process 1 of 2") != std::string::npos);
  CHECK(r.output.find("devices: CpuDevice(id=0)@0 CpuDevice(id=1)@1") != std::string::npos);
}
