/// `actormesh launch`: the coordinator's port and what each child is told about the cluster.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace am::tools {

/// The variables the launcher sets in every child, as the runtime reads them (devices/options.hpp).
inline constexpr const char* coordinator_variable = "AM_COORDINATOR";     ///< "127.0.0.1:<port>"
inline constexpr const char* num_processes_variable = "AM_NUM_PROCESSES"; ///< N
inline constexpr const char* process_id_variable = "AM_PROCESS_ID";       ///< 0..N-1
inline constexpr const char* cpu_devices_variable = "AM_CPU_DEVICES";     ///< K, with --cpu-devices
/// Which attempt this is: 0, then one more at each restart of the group (torchrun's
/// TORCHELASTIC_RESTART_COUNT), so that a program can tell a fresh start from a resumed one.
inline constexpr const char* restart_count_variable = "AM_RESTART_COUNT";

/// The coordinator's port on 127.0.0.1: `fixed` when given, after checking that it can be bound
/// now (SO_REUSEADDR, as a server binds it), else a free one the kernel picks (bind to port 0 and
/// read it back). Throws am::value_error when the fixed port is in use, am::runtime_error when no
/// socket can be made.
int coordinator_port(std::optional<int> fixed);

/// What every child of one attempt is told about the cluster.
struct cluster_variables {
  std::string coordinator;        ///< AM_COORDINATOR, "host:port"
  int num_processes = 1;          ///< AM_NUM_PROCESSES: every node's processes
  std::optional<int> cpu_devices; ///< AM_CPU_DEVICES, when --cpu-devices is given
  std::string cluster_token;      ///< AM_CLUSTER_TOKEN, when not empty
  int restart_count = 0;          ///< AM_RESTART_COUNT
};

/// The environment of child `process_id`: the launcher's own, with AM_COORDINATOR,
/// AM_NUM_PROCESSES, AM_PROCESS_ID and AM_RESTART_COUNT (and AM_CPU_DEVICES when given) replaced,
/// and AM_CLUSTER_TOKEN set when the cluster's token is not empty.
std::vector<std::string> child_environment(const cluster_variables& cluster, int process_id);

/// The secret a launch gives its processes: a new one, unless the user gave one
/// (AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE in the launcher's environment), which they then inherit
/// (the result is empty).
std::string launch_cluster_token();

/// Whether the user gave the cluster's secret (AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE, checked
/// as launch_cluster_token does), as launchers on several nodes need: each would make its own.
bool user_gave_cluster_token();

} // namespace am::tools
