/// Runtime options and where they come from. Precedence, lowest first: built-in defaults, a detected
/// job launcher's variables (Slurm, Open MPI; cluster settings only, devices/cluster_environment.hpp),
/// AM_* environment variables, command-line flags (--am-*), values set in code. doc/runtime.md has
/// the table of every option.
#ifndef ACTORMESH_DEVICES_OPTIONS_HPP
#define ACTORMESH_DEVICES_OPTIONS_HPP

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace am {

/// How CAF schedules the runtime's event-based actors (device actors always have their own thread).
enum class scheduler_policy {
  sharing,  ///< one shared queue: lowest latency on few cores (the default)
  stealing, ///< per-worker queues with stealing: better for many busy actors
};

/// What a process of a cluster does (doc/multihost.md).
enum class process_role {
  peer,       ///< multi-controller: every process runs the program on its own devices (the default)
  controller, ///< single-controller: process 0 runs the program and drives every device of the cluster
  worker,     ///< single-controller: runs the controller's calls on its devices (`runtime::serve()`)
};

/// Options as given in code: every field left empty falls back to flags, environment, defaults.
struct options {
  /// Number of virtual CPU devices (like XLA's --xla_force_host_platform_device_count). Default 8.
  std::optional<int> cpu_devices;
  /// Scheduler policy of CAF's worker threads. Default sharing.
  std::optional<scheduler_policy> scheduler;
  /// CAF worker threads; 0 means CAF's default (one per core). Default 0.
  std::optional<int> scheduler_threads;
  /// Whether to use CUDA GPUs when some are found. Default true.
  std::optional<bool> use_gpus;
  /// Log level: off, error, warning, info, debug, trace. Default warning (quiet).
  std::optional<std::string> log_level;
  /// Bytes of buffers each CPU device may hold at once (0: no limit); beyond it allocations fail
  /// with am::out_of_memory_error. Default 0.
  std::optional<std::uint64_t> cpu_memory_limit;
  /// Record a trace into this file, written when the runtime stops (AM_TRACE, --am-trace;
  /// observability/trace.hpp). In a cluster of N > 1 processes each writes FILE.rank<i>. Default: none.
  std::optional<std::string> trace;
  /// Serve this process's live counters to Prometheus over HTTP at http://HOST:PORT/metrics, PORT
  /// being this value + the process's index (AM_METRICS_PORT, --am-metrics-port; 0: a free port,
  /// logged at info level). Default: none. doc/observability.md, "Prometheus".
  std::optional<int> metrics_port;
  /// The interface the metrics endpoint listens on (AM_METRICS_HOST, --am-metrics-host). Default
  /// 127.0.0.1: loopback, as the counters name devices and callers; 0.0.0.0 for a scraper elsewhere.
  std::optional<std::string> metrics_host;

  // ---- cluster (doc/runtime.md "Cluster options", doc/multihost.md) ----
  /// The coordinator as "host:port" or "[ipv6]:port", port 1..65535 (AM_COORDINATOR,
  /// --am-coordinator). Empty with one process: local mode (no networking); an empty value also
  /// drops a coordinator a launcher gave. Default: the launcher's (Slurm, Open MPI), else none.
  std::optional<std::string> coordinator_address;
  /// Number of processes in the cluster, >= 1; more than one needs a coordinator
  /// (AM_NUM_PROCESSES, --am-num-processes). Default: the launcher's, else 1.
  std::optional<int> num_processes;
  /// This process's index, 0..num_processes-1; process 0 hosts the mesh supervisor
  /// (AM_PROCESS_ID, --am-process-id). Default: the launcher's, else 0.
  std::optional<int> process_id;
  /// The interface the coordinator listens on (AM_LISTEN_ADDRESS, --am-listen-address). Default:
  /// the coordinator's host (so loopback for 127.0.0.1 / localhost); never all interfaces unless
  /// asked for ("0.0.0.0").
  std::optional<std::string> listen_address;
  // Durations below: > 0; as text a whole number with ms, s or m ("500ms", "30s", "2m"), a bare
  // number being seconds (AM_JOIN_TIMEOUT, --am-join-timeout and so on).
  /// How long joining waits for every process. Default 60 s.
  std::optional<std::chrono::milliseconds> join_timeout;
  /// How often each process tells the supervisor it is alive. Default 1 s.
  std::optional<std::chrono::milliseconds> heartbeat_interval;
  /// Silence after which the supervisor declares a process failed; longer than the interval.
  /// Default 20 s (a loaded 2-core machine must not misfire).
  std::optional<std::chrono::milliseconds> heartbeat_timeout;
  /// Default timeout of barriers and collectives. Default 300 s.
  std::optional<std::chrono::milliseconds> collective_timeout;
  /// How long stopping waits for the other processes to stop too. Default 30 s.
  std::optional<std::chrono::milliseconds> shutdown_timeout;
  /// Mutual TLS (CAF's OpenSSL module): this node's certificate (PEM file; AM_TLS_CERTIFICATE,
  /// --am-tls-certificate). All three TLS files or none; none: plain TCP.
  std::optional<std::string> tls_certificate;
  /// The certificate's private key (PEM file; AM_TLS_KEY, --am-tls-key).
  std::optional<std::string> tls_key;
  /// The CA file that peers' certificates must chain to (AM_TLS_CA, --am-tls-ca).
  std::optional<std::string> tls_ca;
  /// peer, controller or worker (AM_ROLE, --am-role). A controller is process 0 of a cluster
  /// whose other processes are workers; peers and workers never mix. Default peer.
  std::optional<process_role> role;
  /// The cluster's secret (AM_CLUSTER_TOKEN, --am-cluster-token): every process proves it holds
  /// it before the coordinator lets its bytes reach an actor (doc/multihost_security.md).
  /// `actormesh launch` makes one. A flag shows in `ps`: prefer the variable or a file. Default none.
  std::optional<std::string> cluster_token;
  /// A file whose content (one line) is the cluster's secret (AM_CLUSTER_TOKEN_FILE,
  /// --am-cluster-token-file); give this or cluster_token, not both.
  std::optional<std::string> cluster_token_file;
  /// The largest message frame the coordinator takes from a peer, in bytes (AM_MAX_FRAME_BYTES,
  /// --am-max-frame-bytes; suffixes as for memory limits: 512M, 2GiB). A larger one closes that
  /// connection; a frame's bytes are held only as they arrive. Default 1 GiB.
  std::optional<std::uint64_t> max_frame_bytes;
  /// The most connections the coordinator holds at once, handshakes included (AM_MAX_CONNECTIONS,
  /// --am-max-connections); beyond it new ones are closed at once. Default 512.
  std::optional<int> max_connections;
};

/// The options in force, every field decided.
struct resolved_options {
  int cpu_devices = 8;
  am::scheduler_policy scheduler = am::scheduler_policy::sharing;
  int scheduler_threads = 0;
  bool use_gpus = true;
  std::string log_level = "warning";
  std::uint64_t cpu_memory_limit = 0;
  std::string trace; ///< empty: no trace
  int metrics_port = -1;                 ///< -1: no metrics endpoint
  std::string metrics_host = "127.0.0.1";

  std::string coordinator_address;  ///< empty: local mode
  int num_processes = 1;
  int process_id = 0;
  std::string listen_address;       ///< decided: never empty when coordinator_address is set (an
                                    ///< IPv6 host without its brackets)
  std::chrono::milliseconds join_timeout{60000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{20000};
  std::chrono::milliseconds collective_timeout{300000};
  std::chrono::milliseconds shutdown_timeout{30000};
  std::string tls_certificate;      ///< empty: no TLS (then tls_key and tls_ca are empty too)
  std::string tls_key;
  std::string tls_ca;
  am::process_role role = am::process_role::peer;
  std::string cluster_token;        ///< empty: no secret (read from cluster_token_file when given)
  std::string cluster_token_file;   ///< where cluster_token was read from, or empty
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;
  int max_connections = 512;
  /// Where the cluster settings came from: "code", "flags", "AM_* environment", "Slurm" or
  /// "Open MPI", the highest-precedence source that set coordinator_address, num_processes or
  /// process_id; "local" when not clustered. For `actormesh info`.
  std::string cluster_source = "local";

  /// True when this process is part of a cluster (a coordinator is set).
  bool clustered() const noexcept { return !coordinator_address.empty(); }
};

/// Reads an environment variable; returns null when unset. Replaceable for tests.
using environment_lookup = std::function<const char*(const char*)>;

/// Combines defaults < a detected launcher (detect_launcher_cluster: Slurm or Open MPI, for
/// coordinator_address, num_processes and process_id) < environment (AM_CPU_DEVICES, AM_SCHEDULER,
/// AM_SCHEDULER_THREADS, AM_USE_GPUS, AM_LOG, AM_CPU_MEMORY_LIMIT, AM_COORDINATOR,
/// AM_NUM_PROCESSES, AM_PROCESS_ID, AM_LISTEN_ADDRESS, AM_JOIN_TIMEOUT, AM_HEARTBEAT_INTERVAL,
/// AM_HEARTBEAT_TIMEOUT, AM_COLLECTIVE_TIMEOUT, AM_SHUTDOWN_TIMEOUT, AM_TLS_CERTIFICATE, AM_TLS_KEY,
/// AM_TLS_CA, AM_ROLE, AM_CLUSTER_TOKEN, AM_CLUSTER_TOKEN_FILE, AM_MAX_FRAME_BYTES,
/// AM_MAX_CONNECTIONS) < flags in `args` (the same names as --am-cpu-devices N and so on, except --am-gpus
/// for AM_USE_GPUS and --am-log for AM_LOG; `--flag=value` or `--flag value`; another argument that
/// starts with --am- is refused with the nearest flag's name, other arguments and all after `--` are
/// the program's own) < `in_code`, field by field. A memory limit is a byte count, optionally with a binary
/// suffix: 512M, 2GiB, 64k. Then checks the cluster settings together (process_id < num_processes,
/// a coordinator for more than one process, all three TLS files or none, heartbeat_timeout >
/// heartbeat_interval) and decides listen_address and cluster_source. A launcher's coordinator is
/// dropped when num_processes ends up 1 (a lone process runs locally).
/// Throws am::value_error naming the source of a bad value.
resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args,
                                 const environment_lookup& env);

/// The same with the process environment.
resolved_options resolve_options(const options& in_code, const std::vector<std::string>& args = {});

/// The runtime's command-line flags, one per line with its environment variable
/// ("  --am-cpu-devices VALUE   AM_CPU_DEVICES"), for a program's --help.
std::string runtime_flags_help();

/// Printable name of a policy (`sharing`, `stealing`).
std::string to_string(scheduler_policy p);

/// Printable name of a role (`peer`, `controller`, `worker`).
std::string to_string(process_role r);

} // namespace am

#endif // ACTORMESH_DEVICES_OPTIONS_HPP
