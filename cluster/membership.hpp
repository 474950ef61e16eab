/// Who is in the cluster: the join request a process sends the supervisor, and the directory the
/// supervisor answers with once every process has joined (the global device list). Plain data with
/// its wire encoding; decoding validates every count, index and id.
#pragma once

#include "actormesh/actors/device_info.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am::detail {

/// The version of the cluster's message formats; a peer with another one is refused at join.
/// 2: a role in the join request and the directory, and the workers' call servers.
inline constexpr std::uint32_t wire_protocol_version = 2;

/// The most processes a cluster may have, and devices one process may bring.
inline constexpr int max_cluster_processes = 4096;
inline constexpr int max_process_devices = 4096;

/// What a process does in its cluster: every process runs the program (peers, multi-controller),
/// or process 0 runs it and drives the others' devices (one controller, workers).
enum class member_role : std::uint8_t { peer, controller, worker };

/// "peer", "controller", "worker".
const char* role_name(member_role r) noexcept;

/// What a process says about itself when it joins.
struct join_request {
  std::uint32_t protocol = wire_protocol_version;
  std::string version;          ///< the actormesh build version
  int process = 0;              ///< its process index
  int process_count = 1;        ///< how many processes it expects
  std::string host;             ///< its host name, for messages
  std::vector<device> devices;  ///< its local devices; `id` and `process_index` are ignored
  member_role role = member_role::peer;
};

std::string encode(const join_request& r);
join_request decode_join_request(const std::string& bytes);

/// The cluster as the supervisor assembled it: every device with its global id (ordered by
/// process, then by the order each process listed them) and each process's host name.
struct cluster_directory {
  std::vector<device> devices;
  std::vector<std::string> hosts;
  std::vector<member_role> roles; ///< by process

  /// True when process 0 is a controller driving workers.
  bool single_controller() const noexcept { return !roles.empty() && roles.front() == member_role::controller; }

  /// The global ids of process `p`'s devices.
  std::vector<int> device_ids_of(int p) const;
};

std::string encode(const cluster_directory& d);
cluster_directory decode_directory(const std::string& bytes);

/// "process 2 (host node3, devices 4-5)": how errors name a process.
std::string describe_process(const cluster_directory& d, int p);

/// "1, 3 and 4".
std::string join_list(const std::vector<int>& values);

} // namespace am::detail
