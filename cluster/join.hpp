/// Bringing a process into its cluster over CAF's middleman: process 0 spawns the mesh supervisor
/// and publishes it on the coordinator address; every process connects (retrying until the join
/// timeout), spawns its cluster client and waits for the directory. Without a coordinator, a
/// one-process cluster runs inside the actor system with no networking, so barriers and the store
/// behave the same in local mode. Internal.
#pragma once

#include "cluster/cluster_client.hpp"
#include "cluster/guard/guarded_listener.hpp"
#include "actormesh/actors/device_info.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// Everything joining needs, decided by the runtime's options.
struct join_settings {
  bool networked = false;            ///< false: local mode (one process, no sockets)
  int process = 0;
  int process_count = 1;
  std::string coordinator_host;      ///< where process 0 listens and the others connect
  std::uint16_t coordinator_port = 0;
  std::string listen_address;        ///< the interface process 0 binds
  bool tls = false;                  ///< publish and connect through CAF's OpenSSL module
  std::string cluster_token;         ///< the cluster's secret; empty: none (loopback or TLS only)
  std::uint64_t max_frame_bytes = std::uint64_t{1} << 30; ///< the largest frame process 0 takes
  int max_connections = 512;         ///< the most connections process 0 holds at once
  std::chrono::milliseconds join_timeout{60000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{20000};
  std::chrono::milliseconds collective_timeout{300000};
  std::vector<device> local_devices; ///< platform and local ordinal of each, in order
  member_role role = member_role::peer;
  caf::actor call_server;            ///< a worker's (registered with its join)
  /// This process's answer to a stats request of `actormesh info --watch` (the runtime's live
  /// counters, encoded as observability/stats_wire.hpp says); empty: the answer says there are none.
  std::function<std::string()> answer_stats;
};

/// Loads the modules a networked runtime needs (middleman, OpenSSL when `tls`) and sets their
/// options; call before the actor system is constructed.
void configure_cluster_modules(caf::actor_system_config& cfg, const join_settings& s,
                               const std::string& tls_certificate, const std::string& tls_key,
                               const std::string& tls_ca);

/// This process's place in the cluster.
struct cluster_membership {
  caf::actor supervisor;                   ///< spawned here on process 0 (or in local mode)
  std::unique_ptr<cluster_client> client;
  /// Process 0's public port (networked only); reset it before the actor system ends.
  std::unique_ptr<guard::guarded_listener> listener;
};

/// Joins the cluster `s` describes and waits for its directory. Throws am::timeout_error (naming
/// who never joined), am::value_error (refused: another build, a bad index), am::runtime_error
/// (cannot listen or connect), am::process_failure_error. On failure nothing it spawned is left
/// running.
cluster_membership join_cluster(caf::actor_system& system, const join_settings& s);

/// The build version a process announces at join ("0.1.0"). Tests may announce another one
/// (set_announced_version_for_testing) to check that a peer of another build is refused.
std::string announced_version();
void set_announced_version_for_testing(std::string version);

} // namespace am::detail
