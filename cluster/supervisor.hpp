/// The mesh supervisor: one actor per cluster, on the coordinator (process 0). It keeps the
/// membership and the device directory, runs named barriers, the key-value store used for
/// rendezvous, and the sequencing check of every collective (desync detection); it watches every
/// process (CAF down messages on connection loss, heartbeats) and tells the survivors when one
/// fails. It never touches bulk data. Internal; see doc/architecture.md, "The cluster".
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <string>

namespace am::detail {

/// What the supervisor is told when it is spawned.
struct supervisor_config {
  int process_count = 1;
  std::string version;                       ///< the coordinator's build version
  std::string coordinator;                   ///< "host:port", for messages
  std::chrono::milliseconds join_timeout{60000};
  std::chrono::milliseconds heartbeat_timeout{20000}; ///< zero: no heartbeat checks
  std::chrono::milliseconds tick{50};        ///< how often deadlines and heartbeats are checked
};

/// Spawns the supervisor (an event-based actor on CAF's scheduler). It stops with an exit message.
caf::actor spawn_supervisor(caf::actor_system& system, supervisor_config config);

} // namespace am::detail
