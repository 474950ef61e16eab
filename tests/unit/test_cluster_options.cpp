// Cluster options: defaults < launcher (torchrun, Open MPI, Slurm, Kubernetes) < AM_* environment < --am-* flags < code,
// the launchers' variables, Slurm host lists, JAX's port rule, and every check after resolution.
#include "actormesh/actors/errors.hpp"
#include "devices/cluster_environment.hpp"
#include "actormesh/devices/options.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using Catch::Contains;

namespace {

using vars = std::map<std::string, std::string>;

am::environment_lookup fake_env(vars v) {
  return [v = std::move(v)](const char* name) -> const char* {
    auto it = v.find(name);
    return it == v.end() ? nullptr : it->second.c_str();
  };
}

am::resolved_options resolve(const vars& env, const std::vector<std::string>& args = {}, const am::options& code = {}) {
  return am::resolve_options(code, args, fake_env(env));
}

std::vector<std::string> hosts(const std::string& list) {
  return am::expand_slurm_host_list(list, "SLURM_STEP_NODELIST");
}

/// srun -n 4 in job 12345 on node[001-004]: this is task 2.
vars slurm_job() {
  return {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "12345"},
          {"SLURM_STEP_NODELIST", "node[001-004]"}, {"SLURM_JOB_NODELIST", "node[001-008]"}};
}

/// What Debian's Open MPI 4.1.4 `mpirun -n 2` set for rank 1 (copied from a real run).
vars open_mpi_4_job() {
  return {{"OMPI_COMM_WORLD_RANK", "1"},
          {"OMPI_COMM_WORLD_SIZE", "2"},
          {"OMPI_MCA_orte_hnp_uri", "1987903488.0;tcp://192.0.2.2:36601;tcp6://[fd00::2]:44937"},
          {"PMIX_NAMESPACE", "1987903489"},
          {"PMIX_SERVER_URI41", "1987903488.0;tcp4://127.0.0.1:47939"}};
}

/// Open MPI 5 (PRRTE): no ORTE URI; the PMIx server URI and the namespace name the job.
vars open_mpi_5_job() {
  return {{"OMPI_COMM_WORLD_RANK", "0"},
          {"OMPI_COMM_WORLD_SIZE", "3"},
          {"PRTE_LAUNCHED", "1"},
          {"PMIX_NAMESPACE", "prterun-head-1234@1"},
          {"PMIX_SERVER_URI4", "prterun-head-1234@0.0;tcp4://10.0.0.5:5000"},
          {"PMIX_SERVER_URI2", "prterun-head-1234@0.0;tcp4://10.0.0.9:5000"}};
}

/// What torchrun --nnodes 2 --nproc-per-node 2 --master-addr head --master-port 29500 gives the
/// second process of node 1 (torchrun's own TORCHELASTIC_* and GROUP_RANK too).
vars torchrun_job() {
  return {{"RANK", "3"},        {"WORLD_SIZE", "4"},    {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"}, {"GROUP_RANK", "1"}, {"MASTER_ADDR", "head"},
          {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "none"}};
}

/// Pod 2 of a Kubernetes Indexed Job of 4 completions whose manifest sets the cluster's size and
/// its coordinator through the Job's headless service (doc/multihost.md).
vars kubernetes_job() {
  return {{"JOB_COMPLETION_INDEX", "2"}, {"HOSTNAME", "train-2"}, {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};
}

vars with(vars base, const vars& more) {
  for (auto& [k, v] : more)
    base[k] = v;
  return base;
}

} // namespace

// ---- defaults and AM_* / flags / code ------------------------------------------------------------

TEST_CASE("cluster defaults: one local process", "[options][cluster]") {
  auto o = resolve({});
  CHECK_FALSE(o.clustered());
  CHECK(o.cluster_source == "local");
  CHECK(o.coordinator_address.empty());
  CHECK(o.num_processes == 1);
  CHECK(o.process_id == 0);
  CHECK(o.listen_address.empty());
  CHECK(o.join_timeout == 60s);
  CHECK(o.heartbeat_interval == 1s);
  CHECK(o.heartbeat_timeout == 20s);
  CHECK(o.collective_timeout == 300s);
  CHECK(o.shutdown_timeout == 30s);
  CHECK(o.tls_certificate.empty());
  CHECK(o.tls_key.empty());
  CHECK(o.tls_ca.empty());
}

TEST_CASE("AM_* variables set every cluster option", "[options][cluster]") {
  auto o = resolve({{"AM_COORDINATOR", "127.0.0.1:7000"}, {"AM_NUM_PROCESSES", "3"}, {"AM_PROCESS_ID", "2"},
                    {"AM_JOIN_TIMEOUT", "90s"}, {"AM_HEARTBEAT_INTERVAL", "500ms"},
                    {"AM_HEARTBEAT_TIMEOUT", "2m"}, {"AM_COLLECTIVE_TIMEOUT", "45"},
                    {"AM_SHUTDOWN_TIMEOUT", "10s"}, {"AM_TLS_CERTIFICATE", "node.pem"}, {"AM_TLS_KEY", "node.key"},
                    {"AM_TLS_CA", "ca.pem"}});
  CHECK(o.clustered());
  CHECK(o.cluster_source == "AM_* environment");
  CHECK(o.coordinator_address == "127.0.0.1:7000");
  CHECK(o.num_processes == 3);
  CHECK(o.process_id == 2);
  CHECK(o.listen_address == "127.0.0.1"); // the coordinator's host: loopback stays loopback
  CHECK(o.join_timeout == 90s);
  CHECK(o.heartbeat_interval == 500ms);
  CHECK(o.heartbeat_timeout == 2min);
  CHECK(o.collective_timeout == 45s);
  CHECK(o.shutdown_timeout == 10s);
  CHECK(o.tls_certificate == "node.pem");
  CHECK(o.tls_key == "node.key");
  CHECK(o.tls_ca == "ca.pem");
}

TEST_CASE("flags override AM_* variables, code overrides flags, field by field", "[options][cluster]") {
  vars env{{"AM_COORDINATOR", "localhost:7000"}, {"AM_NUM_PROCESSES", "4"}, {"AM_PROCESS_ID", "1"},
           {"AM_JOIN_TIMEOUT", "5s"}};
  std::vector<std::string> args{"prog", "--am-process-id", "3", "--am-join-timeout=7s", "--am-listen-address=0.0.0.0",
                                "--am-heartbeat-interval", "2s", "--am-heartbeat-timeout=4s", "input.txt"};
  auto from_flags = resolve(env, args);
  CHECK(from_flags.cluster_source == "flags");
  CHECK(from_flags.coordinator_address == "localhost:7000");
  CHECK(from_flags.num_processes == 4);
  CHECK(from_flags.process_id == 3);
  CHECK(from_flags.join_timeout == 7s);
  CHECK(from_flags.listen_address == "0.0.0.0");
  CHECK(from_flags.heartbeat_interval == 2s);
  CHECK(from_flags.heartbeat_timeout == 4s);

  am::options code;
  code.process_id = 0;
  code.join_timeout = 1500ms;
  code.shutdown_timeout = 3s;
  auto from_code = resolve(env, args, code);
  CHECK(from_code.cluster_source == "code");
  CHECK(from_code.process_id == 0);
  CHECK(from_code.join_timeout == 1500ms);
  CHECK(from_code.shutdown_timeout == 3s);
  CHECK(from_code.num_processes == 4); // still from the environment
  CHECK(from_code.listen_address == "0.0.0.0"); // still from the flag
}

TEST_CASE("every cluster flag has a name", "[options][cluster]") {
  auto o = resolve({}, {"--am-coordinator", "[::1]:7001", "--am-num-processes", "2", "--am-process-id=1",
                        "--am-collective-timeout=1m", "--am-shutdown-timeout", "250ms", "--am-tls-certificate=c",
                        "--am-tls-key=k", "--am-tls-ca", "a"});
  CHECK(o.coordinator_address == "[::1]:7001");
  CHECK(o.listen_address == "::1"); // an IPv6 host without its brackets
  CHECK(o.num_processes == 2);
  CHECK(o.process_id == 1);
  CHECK(o.collective_timeout == 1min);
  CHECK(o.shutdown_timeout == 250ms);
  CHECK(o.tls_certificate == "c");
  CHECK(o.tls_key == "k");
  CHECK(o.tls_ca == "a");
}

TEST_CASE("cluster settings in code", "[options][cluster]") {
  am::options code;
  code.coordinator_address = "10.1.2.3:9000";
  code.num_processes = 2;
  code.process_id = 1;
  code.listen_address = "10.1.2.4";
  auto o = resolve({}, {}, code);
  CHECK(o.cluster_source == "code");
  CHECK(o.coordinator_address == "10.1.2.3:9000");
  CHECK(o.listen_address == "10.1.2.4");
  CHECK(o.process_id == 1);
}

TEST_CASE("a coordinator with one process is a cluster of one, an empty one is local", "[options][cluster]") {
  auto one = resolve({{"AM_COORDINATOR", "localhost:7000"}});
  CHECK(one.clustered());
  CHECK(one.num_processes == 1);
  CHECK(one.listen_address == "localhost");
  auto empty = resolve({{"AM_COORDINATOR", "localhost:7000"}}, {"--am-coordinator="});
  CHECK_FALSE(empty.clustered());
  CHECK(empty.cluster_source == "local");
  // Timeouts alone do not make a cluster.
  CHECK(resolve({{"AM_JOIN_TIMEOUT", "5s"}}).cluster_source == "local");
}

TEST_CASE("durations: a whole number with ms, s or m, a bare number is seconds", "[options][cluster]") {
  CHECK(resolve({{"AM_JOIN_TIMEOUT", "1ms"}}).join_timeout == 1ms);
  CHECK(resolve({{"AM_JOIN_TIMEOUT", "30s"}}).join_timeout == 30s);
  CHECK(resolve({{"AM_JOIN_TIMEOUT", "2m"}}).join_timeout == 2min);
  CHECK(resolve({{"AM_JOIN_TIMEOUT", "12"}}).join_timeout == 12s);
  for (std::string bad : {"0", "0ms", "-1s", "1h", "1.5s", "", "s", "5 s", "30S", "99999999999999999m"})
    CHECK_THROWS_WITH(resolve({{"AM_JOIN_TIMEOUT", bad}}),
                      "AM_JOIN_TIMEOUT='" + bad
                          + "' is not a duration > 0 (like 500ms, 30s or 2m; a bare number is seconds)");
  CHECK_THROWS_WITH(resolve({}, {"--am-shutdown-timeout=never"}),
                    Contains("--am-shutdown-timeout='never' is not a duration > 0"));
  am::options code;
  code.collective_timeout = 0ms;
  CHECK_THROWS_WITH(resolve({}, {}, code), "options.collective_timeout=0ms is not a duration > 0");
}

// ---- Slurm ----------------------------------------------------------------------------------------

TEST_CASE("Slurm host lists", "[options][cluster][slurm]") {
  using list = std::vector<std::string>;
  CHECK(hosts("node1") == list{"node1"});
  CHECK(hosts("a,b") == list{"a", "b"});
  CHECK(hosts("node[001-004,007],gpu[1-2]")
        == list{"node001", "node002", "node003", "node004", "node007", "gpu1", "gpu2"});
  CHECK(hosts("n[08-10]") == list{"n08", "n09", "n10"}); // the padding of the lower bound
  CHECK(hosts("n[8-10]") == list{"n8", "n9", "n10"});
  CHECK(hosts("n[7]") == list{"n7"});
  CHECK(hosts("[1-2]x") == list{"1x", "2x"});
  CHECK(hosts("rack[1-2]-n[1-2]") == list{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"});
  CHECK(hosts("login,node[1-2]-ib,cpu01") == list{"login", "node1-ib", "node2-ib", "cpu01"});
  CHECK(hosts("node[1-1000]").size() == 1000);
}

TEST_CASE("malformed Slurm host lists name the variable and the fault", "[options][cluster][slurm]") {
  auto fails = [](const std::string& list, const std::string& why) {
    CHECK_THROWS_WITH(hosts(list), "SLURM_STEP_NODELIST='" + list + "' is not a Slurm host list: " + why);
  };
  fails("", "an empty host name");
  fails("a,,b", "an empty host name");
  fails("a,", "an empty host name");
  fails("node[1-", "'[' without ']'");
  fails("node[1[2]]", "'[' without ']'");
  fails("node]1", "']' without '['");
  fails("node[1-2]]", "']' without '['");
  fails("node[]", "'' is not a number or a range of numbers");
  fails("node[a-b]", "'a-b' is not a number or a range of numbers");
  fails("node[1-2-3]", "'1-2-3' is not a number or a range of numbers");
  fails("node[5-3]", "the range '5-3' runs backwards");
  fails("n[1-2000000]", "more than 1000000 hosts");
  CHECK_THROWS_AS(hosts("node[,]"), am::value_error);
}

TEST_CASE("JAX's port rule: job id mod 4096 in the top 4096 ports", "[options][cluster]") {
  CHECK(am::derived_coordinator_port(0) == 61440);
  CHECK(am::derived_coordinator_port(4095) == 65535);
  CHECK(am::derived_coordinator_port(4096) == 61440);
  CHECK(am::derived_coordinator_port(12345) == 61497);
  CHECK(am::parse_port("1") == 1);
  CHECK(am::parse_port("65535") == 65535);
  for (auto bad : {"0", "65536", "", "-1", "80a", " 80", "+80"})
    CHECK_FALSE(am::parse_port(bad));
}

TEST_CASE("Slurm: task, task count and the first node of the step as coordinator", "[options][cluster][slurm]") {
  auto o = resolve(slurm_job());
  CHECK(o.cluster_source == "Slurm");
  CHECK(o.process_id == 2);
  CHECK(o.num_processes == 4);
  CHECK(o.coordinator_address == "node001:61497"); // 12345 % 4096 + 61440
  CHECK(o.listen_address == "node001");

  auto detected = am::detect_launcher_cluster(fake_env(slurm_job()));
  REQUIRE(detected);
  CHECK(detected->launcher == "Slurm");
  CHECK(detected->coordinator_problem.empty());
  REQUIRE(detected->settings.size() == 3);
  CHECK(detected->settings[2].source == "SLURM_STEP_NODELIST and SLURM_JOB_ID");
}

TEST_CASE("Slurm: the job's node list without a step's, AM_COORDINATOR_PORT", "[options][cluster][slurm]") {
  auto env = slurm_job();
  env.erase("SLURM_STEP_NODELIST");
  env["SLURM_JOB_NODELIST"] = "gpu[07-08],cpu1";
  CHECK(resolve(env).coordinator_address == "gpu07:61497");
  env["AM_COORDINATOR_PORT"] = "29500";
  CHECK(resolve(env).coordinator_address == "gpu07:29500");
  env["AM_COORDINATOR_PORT"] = "0";
  CHECK_THROWS_WITH(resolve(env), "AM_COORDINATOR_PORT='0' is not a port (1..65535)");
}

TEST_CASE("Slurm needs SLURM_PROCID, SLURM_NTASKS and a node list", "[options][cluster][slurm]") {
  for (const char* missing : {"SLURM_PROCID", "SLURM_NTASKS"}) {
    auto env = slurm_job();
    env.erase(missing);
    CHECK_FALSE(am::detect_launcher_cluster(fake_env(env)));
    CHECK(resolve(env).cluster_source == "local");
  }
  auto env = slurm_job();
  env.erase("SLURM_STEP_NODELIST");
  env.erase("SLURM_JOB_NODELIST");
  CHECK_FALSE(am::detect_launcher_cluster(fake_env(env)));
}

TEST_CASE("AM_*, flags and code override what Slurm says", "[options][cluster][slurm]") {
  auto env = with(slurm_job(), {{"AM_PROCESS_ID", "3"}});
  auto o = resolve(env);
  CHECK(o.cluster_source == "AM_* environment");
  CHECK(o.process_id == 3);
  CHECK(o.num_processes == 4);
  CHECK(o.coordinator_address == "node001:61497");
  CHECK(resolve(env, {"--am-coordinator=head:1234"}).coordinator_address == "head:1234");
  CHECK(resolve(env, {"--am-coordinator=head:1234"}).cluster_source == "flags");
}

TEST_CASE("a launcher job of one process runs locally", "[options][cluster][slurm]") {
  auto lone = resolve(with(slurm_job(), {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  CHECK_FALSE(lone.clustered());
  CHECK(lone.cluster_source == "local");
  auto opted_out = resolve(with(slurm_job(), {{"SLURM_PROCID", "0"}, {"AM_NUM_PROCESSES", "1"}}));
  CHECK_FALSE(opted_out.clustered());
  // A coordinator asked for explicitly stays, even for one process.
  CHECK(resolve(with(slurm_job(), {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"AM_COORDINATOR", "h:1"}}))
            .clustered());
}

TEST_CASE("Slurm's bad values name Slurm's variables", "[options][cluster][slurm]") {
  CHECK_THROWS_WITH(resolve(with(slurm_job(), {{"SLURM_PROCID", "x"}})), "SLURM_PROCID='x' is not an integer >= 0");
  CHECK_THROWS_WITH(resolve(with(slurm_job(), {{"SLURM_NTASKS", "0"}})), "SLURM_NTASKS='0' is not an integer >= 1");
  CHECK_THROWS_WITH(resolve(with(slurm_job(), {{"SLURM_PROCID", "4"}})),
                    "process_id=4 (from SLURM_PROCID) is not below num_processes=4 (from SLURM_NTASKS)");
  // A node list or job id that names no coordinator is replaceable by AM_COORDINATOR ...
  auto broken = with(slurm_job(), {{"SLURM_STEP_NODELIST", "node[1-"}});
  CHECK(resolve(with(broken, {{"AM_COORDINATOR", "node1:7000"}})).coordinator_address == "node1:7000");
  // ... and the error without one says why Slurm gave none.
  CHECK_THROWS_WITH(resolve(broken),
                    "num_processes=4 (from SLURM_NTASKS) needs a coordinator (Slurm names none: "
                    "SLURM_STEP_NODELIST='node[1-' is not a Slurm host list: '[' without ']'): "
                    "set AM_COORDINATOR or --am-coordinator to host:port");
  CHECK_THROWS_WITH(resolve(with(slurm_job(), {{"SLURM_JOB_ID", "abc"}})),
                    Contains("SLURM_JOB_ID='abc' is not a job id (a number)"));
  auto no_job = slurm_job();
  no_job.erase("SLURM_JOB_ID");
  CHECK_THROWS_WITH(resolve(no_job), Contains("SLURM_JOB_ID is not set, so no port can be derived"));
  CHECK(resolve(with(no_job, {{"AM_COORDINATOR_PORT", "7777"}})).coordinator_address == "node001:7777");
}

// ---- Open MPI -------------------------------------------------------------------------------------

TEST_CASE("Open MPI 4: rank, size and mpirun's host from OMPI_MCA_orte_hnp_uri", "[options][cluster][ompi]") {
  auto o = resolve(open_mpi_4_job());
  CHECK(o.cluster_source == "Open MPI");
  CHECK(o.process_id == 1);
  CHECK(o.num_processes == 2);
  CHECK(o.coordinator_address == "192.0.2.2:63440"); // 1987903488 / 4096 % 4096 + 61440
  CHECK(o.listen_address == "192.0.2.2");

  // JAX's examples: several IPv4 addresses (the first), and IPv6 only (in brackets).
  auto env = open_mpi_4_job();
  env["OMPI_MCA_orte_hnp_uri"] = "1531576320.0;tcp://10.96.0.1,10.148.0.1,10.108.0.1:34911";
  CHECK(resolve(env).coordinator_address == "10.96.0.1:62624");
  env["OMPI_MCA_orte_hnp_uri"] = "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370";
  auto v6 = resolve(env);
  CHECK(v6.coordinator_address == "[fe80::b9b:ac5d:9cf0:b858]:62880");
  CHECK(v6.listen_address == "fe80::b9b:ac5d:9cf0:b858");
  env["AM_COORDINATOR_PORT"] = "4000";
  CHECK(resolve(env).coordinator_address == "[fe80::b9b:ac5d:9cf0:b858]:4000");
}

TEST_CASE("Open MPI 5 (PRRTE): the PMIx server URI and PMIX_NAMESPACE", "[options][cluster][ompi]") {
  auto o = resolve(open_mpi_5_job());
  CHECK(o.cluster_source == "Open MPI");
  CHECK(o.num_processes == 3);
  CHECK(o.coordinator_address == "10.0.0.5:62674"); // PMIX_SERVER_URI4 before URI2; 1234 % 4096 + 61440
  // Without PRTE_LAUNCHED=1 the PMIx variables say nothing.
  auto env = open_mpi_5_job();
  env.erase("PRTE_LAUNCHED");
  CHECK_THROWS_WITH(resolve(env),
                    "num_processes=3 (from OMPI_COMM_WORLD_SIZE) needs a coordinator (Open MPI names none: neither "
                    "OMPI_MCA_orte_hnp_uri nor (with PRTE_LAUNCHED=1) a PMIX_SERVER_URI is set): set AM_COORDINATOR "
                    "or --am-coordinator to host:port");
  CHECK(resolve(with(env, {{"AM_COORDINATOR", "10.0.0.5:8000"}})).cluster_source == "AM_* environment");
  env = with(open_mpi_5_job(), {{"PMIX_NAMESPACE", "prterun"}});
  CHECK_THROWS_WITH(resolve(env), Contains("PMIX_NAMESPACE='prterun' has no job id (like prterun-host-1234@1)"));
}

TEST_CASE("Open MPI wins over the Slurm allocation mpirun runs in", "[options][cluster][ompi]") {
  auto o = resolve(with(slurm_job(), open_mpi_4_job()));
  CHECK(o.cluster_source == "Open MPI");
  CHECK(o.process_id == 1);
  CHECK(o.num_processes == 2);
}

TEST_CASE("torchrun: RANK, WORLD_SIZE, and the coordinator at MASTER_ADDR on the port after MASTER_PORT",
          "[options][cluster][torchrun]") {
  auto o = resolve(torchrun_job());
  CHECK(o.cluster_source == "torchrun");
  CHECK(o.process_id == 3);
  CHECK(o.num_processes == 4);
  CHECK(o.coordinator_address == "head:29501"); // 29500 is torchrun's own store
  auto detected = am::detect_launcher_cluster(fake_env(torchrun_job()));
  REQUIRE(detected);
  REQUIRE(detected->settings.size() == 3);
  CHECK(detected->settings[2].source == "MASTER_ADDR and MASTER_PORT + 1");
  CHECK(resolve(with(torchrun_job(), {{"AM_COORDINATOR_PORT", "8476"}})).coordinator_address == "head:8476");
  // The AM_* variables the actormesh launcher sets win over torchrun's.
  auto launched = resolve(with(torchrun_job(), {{"AM_PROCESS_ID", "0"}, {"AM_NUM_PROCESSES", "2"},
                                                {"AM_COORDINATOR", "127.0.0.1:4000"}}));
  CHECK(launched.process_id == 0);
  CHECK(launched.num_processes == 2);
  CHECK(launched.coordinator_address == "127.0.0.1:4000");
}

TEST_CASE("torchrun needs all four of its variables, wins over Slurm, and its bad values are named",
          "[options][cluster][torchrun]") {
  for (const char* missing : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
    auto env = torchrun_job();
    env.erase(missing);
    CHECK_FALSE(am::detect_launcher_cluster(fake_env(env)));
  }
  // srun torchrun ...: Slurm's task is the node's, torchrun's RANK the process's.
  CHECK(resolve(with(slurm_job(), torchrun_job())).cluster_source == "torchrun");
  CHECK_THROWS_WITH(resolve(with(torchrun_job(), {{"MASTER_PORT", "65535"}})),
                    Contains("needs a coordinator (torchrun names none: MASTER_PORT='65535' is not a port below 65535)"));
  CHECK_THROWS_WITH(resolve(with(torchrun_job(), {{"RANK", "x"}})), Contains("RANK"));
}

TEST_CASE("a Kubernetes Indexed Job: JOB_COMPLETION_INDEX is the process id, size and coordinator come from its manifest",
          "[options][cluster][kubernetes]") {
  auto o = resolve(with(kubernetes_job(), {{"AM_NUM_PROCESSES", "4"}, {"AM_COORDINATOR", "train-0.train:8476"}}));
  CHECK(o.process_id == 2);
  CHECK(o.num_processes == 4);
  CHECK(o.coordinator_address == "train-0.train:8476");
  CHECK_THROWS_WITH(resolve(kubernetes_job()),
                    "process_id=2 (from JOB_COMPLETION_INDEX) places this process in a Kubernetes Indexed Job, but the "
                    "Job does not say how many pods it has: set AM_NUM_PROCESSES to its completions (doc/multihost.md)");
  CHECK_THROWS_WITH(resolve(with(kubernetes_job(), {{"AM_NUM_PROCESSES", "4"}})),
                    Contains("(a Kubernetes Indexed Job names none: set AM_COORDINATOR to pod 0 through the Job's "
                             "headless service, <job>-0.<service>:<port> (doc/multihost.md))"));
  CHECK_THROWS_WITH(resolve(with(kubernetes_job(), {{"AM_NUM_PROCESSES", "2"}})), Contains("is not below"));
}

TEST_CASE("Open MPI's malformed URIs are named", "[options][cluster][ompi]") {
  auto env = with(open_mpi_4_job(), {{"OMPI_MCA_orte_hnp_uri", "1987903488.0;usock"}});
  CHECK_THROWS_WITH(resolve(env), Contains("OMPI_MCA_orte_hnp_uri='1987903488.0;usock' names no tcp:// or tcp6:// "
                                           "address"));
  env["OMPI_MCA_orte_hnp_uri"] = "x.0;tcp://10.0.0.1:5";
  CHECK_THROWS_WITH(resolve(env),
                    Contains("OMPI_MCA_orte_hnp_uri='x.0;tcp://10.0.0.1:5' does not start with a job id"));
  CHECK_THROWS_WITH(resolve(with(open_mpi_4_job(), {{"OMPI_COMM_WORLD_RANK", "-1"}})),
                    "OMPI_COMM_WORLD_RANK='-1' is not an integer >= 0");
}

// ---- checks after resolution ----------------------------------------------------------------------

TEST_CASE("process counts and ids are checked wherever they come from", "[options][cluster]") {
  CHECK_THROWS_WITH(resolve({{"AM_NUM_PROCESSES", "0"}}), "AM_NUM_PROCESSES='0' is not an integer >= 1");
  CHECK_THROWS_WITH(resolve({{"AM_PROCESS_ID", "-1"}}), "AM_PROCESS_ID='-1' is not an integer >= 0");
  CHECK_THROWS_WITH(resolve({}, {"--am-num-processes", "two"}), "--am-num-processes='two' is not an integer >= 1");
  am::options code;
  code.num_processes = 0;
  CHECK_THROWS_WITH(resolve({}, {}, code), "options.num_processes=0 is not an integer >= 1");
  code.num_processes = 2;
  code.process_id = -3;
  CHECK_THROWS_WITH(resolve({}, {}, code), "options.process_id=-3 is not an integer >= 0");
  CHECK_THROWS_WITH(resolve({{"AM_PROCESS_ID", "1"}}),
                    "process_id=1 (from AM_PROCESS_ID) is not below num_processes=1 (default)");
  CHECK_THROWS_WITH(resolve({{"AM_COORDINATOR", "h:1"}, {"AM_NUM_PROCESSES", "2"}}, {"--am-process-id=2"}),
                    "process_id=2 (from --am-process-id) is not below num_processes=2 (from AM_NUM_PROCESSES)");
}

TEST_CASE("more than one process needs a coordinator", "[options][cluster]") {
  CHECK_THROWS_WITH(resolve({{"AM_NUM_PROCESSES", "2"}}),
                    "num_processes=2 (from AM_NUM_PROCESSES) needs a coordinator: set AM_COORDINATOR or "
                    "--am-coordinator to host:port");
  CHECK_THROWS_AS(resolve({{"AM_NUM_PROCESSES", "2"}, {"AM_COORDINATOR", ""}}), am::value_error);
}

TEST_CASE("the coordinator is host:port with a port in 1..65535", "[options][cluster]") {
  for (std::string good : {"node1:1", "localhost:65535", "10.0.0.1:80", "[::1]:80", "[fe80::1%eth0]:9"})
    CHECK(resolve({{"AM_COORDINATOR", good}}).coordinator_address == good);
  for (std::string bad : {"node1", "node1:", "node1:0", "node1:65536", ":80", "::1:80", "[]:80", "[::1:80",
                          "::1]:80", "host:port", "a b:80", "node1:80x"})
    CHECK_THROWS_WITH(resolve({{"AM_COORDINATOR", bad}}),
                      "AM_COORDINATOR='" + bad + "' is not host:port with a port in 1..65535 (IPv6: [address]:port)");
  am::options code;
  code.coordinator_address = "nohost";
  CHECK_THROWS_WITH(resolve({}, {}, code), Contains("options.coordinator_address='nohost' is not host:port"));
  CHECK_THROWS_WITH(resolve({}, {"--am-coordinator"}), "--am-coordinator needs a value");
}

TEST_CASE("TLS takes a certificate, its key and a CA file, or none", "[options][cluster]") {
  CHECK_THROWS_WITH(resolve({{"AM_TLS_CERTIFICATE", "node.pem"}}),
                    "mutual TLS needs a certificate, its key and a CA file together: tls_certificate='node.pem' "
                    "(from AM_TLS_CERTIFICATE) but no tls_key, tls_ca (AM_TLS_CERTIFICATE, AM_TLS_KEY, AM_TLS_CA: "
                    "all three or none)");
  CHECK_THROWS_WITH(resolve({{"AM_TLS_CERTIFICATE", "node.pem"}, {"AM_TLS_CA", "ca.pem"}}, {"--am-tls-key="}),
                    Contains("but no tls_key"));
  am::options code;
  code.tls_key = "k";
  CHECK_THROWS_WITH(resolve({}, {}, code),
                    Contains("tls_key='k' (from options.tls_key) but no tls_certificate, tls_ca"));
  code.tls_certificate = "c";
  code.tls_ca = "a";
  CHECK(resolve({}, {}, code).tls_ca == "a");
}

TEST_CASE("the heartbeat timeout is longer than the interval", "[options][cluster]") {
  CHECK_THROWS_WITH(resolve({{"AM_HEARTBEAT_TIMEOUT", "1s"}}),
                    "heartbeat_timeout=1s (from AM_HEARTBEAT_TIMEOUT) must be longer than heartbeat_interval=1s "
                    "(default)");
  CHECK_THROWS_WITH(resolve({{"AM_HEARTBEAT_INTERVAL", "30s"}}),
                    "heartbeat_timeout=20s (default) must be longer than heartbeat_interval=30s (from "
                    "AM_HEARTBEAT_INTERVAL)");
  am::options code;
  code.heartbeat_timeout = 1500ms;
  CHECK_THROWS_WITH(resolve({}, {"--am-heartbeat-interval=2s"}, code),
                    "heartbeat_timeout=1500ms (from options.heartbeat_timeout) must be longer than "
                    "heartbeat_interval=2s (from --am-heartbeat-interval)");
  CHECK(resolve({{"AM_HEARTBEAT_INTERVAL", "100ms"}, {"AM_HEARTBEAT_TIMEOUT", "101ms"}}).heartbeat_timeout == 101ms);
}

TEST_CASE("the process role comes from AM_ROLE, --am-role or code and is checked against the index",
          "[unit][options]") {
  vars cluster{{"AM_COORDINATOR", "127.0.0.1:5000"}, {"AM_NUM_PROCESSES", "3"}, {"AM_PROCESS_ID", "0"}};
  CHECK(resolve(cluster).role == am::process_role::peer);
  auto env = cluster;
  env["AM_ROLE"] = "controller";
  CHECK(resolve(env).role == am::process_role::controller);
  env["AM_PROCESS_ID"] = "2";
  CHECK(resolve(env, {"--am-role", "worker"}).role == am::process_role::worker);
  CHECK_THROWS_WITH(resolve(env), Contains("role=controller (from AM_ROLE) needs process_id 0"));
  am::options code;
  code.role = am::process_role::worker;
  CHECK_THROWS_WITH(resolve(cluster, {}, code), Contains("role=worker (from options.role) joins a controller's cluster "
                                                          "as process 1 or above"));
  CHECK_THROWS_WITH(resolve({}, {}, code), Contains("no coordinator"));
  CHECK_THROWS_WITH(resolve({{"AM_ROLE", "boss"}}), Contains("AM_ROLE='boss' is not a process role (peer, controller "
                                                             "or worker)"));
  CHECK(am::to_string(am::process_role::worker) == "worker");
}
