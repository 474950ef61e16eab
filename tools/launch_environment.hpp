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

/// The coordinator's port on 127.0.0.1: `fixed` when given, after checking that it can be bound
/// now (SO_REUSEADDR, as a server binds it), else a free one the kernel picks (bind to port 0 and
/// read it back). Throws am::value_error when the fixed port is in use, am::runtime_error when no
/// socket can be made.
int coordinator_port(std::optional<int> fixed);

/// The environment of child `process_id`: the launcher's own, with AM_COORDINATOR,
/// AM_NUM_PROCESSES and AM_PROCESS_ID (and AM_CPU_DEVICES when `cpu_devices` is given) replaced,
/// and AM_CLUSTER_TOKEN set to `cluster_token` when that is not empty.
std::vector<std::string> child_environment(int port, int num_processes, int process_id, std::optional<int> cpu_devices,
                                           const std::string& cluster_token);

/// The secret a launch gives its processes: a new one, unless the user gave one
/// (AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE in the launcher's environment), which they then inherit
/// (the result is empty).
std::string launch_cluster_token();

} // namespace am::tools
