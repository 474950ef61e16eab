/// Supervision of an actor mesh: what happens when one of its actors fails, and the events its
/// owner is told.
#ifndef ACTORMESH_ACTOR_MESH_SUPERVISION_HPP
#define ACTORMESH_ACTOR_MESH_SUPERVISION_HPP

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace am {

/// What a mesh does when one of its actors fails (its constructor throws, an endpoint throws
/// am::actor_fault, its process dies).
struct supervision_policy {
  /// Restarts allowed per actor within `window` (a fresh instance from the recorded constructor
  /// arguments; the calls queued behind the failure run on it). 0: never restart.
  int max_restarts = 0;
  /// The window the restarts are counted in; older restarts are forgotten.
  std::chrono::milliseconds window{std::chrono::seconds(60)};
  /// When an actor fails beyond its restarts: false (the default) fails that actor's pending and
  /// later calls with am::actor_failure_error; true stops every actor of the mesh, failing theirs.
  bool stop_mesh = false;
};

/// One thing that happened to an actor of a mesh, told to the mesh's owner.
struct supervision_event {
  enum class kind {
    failed,           ///< the actor failed and stays failed (its calls fail)
    restarted,        ///< the actor failed and was restarted by the policy
    mesh_stopped,     ///< the actor failed and the policy stopped the mesh
    broadcast_failed, ///< a broadcast (no answer) threw at this actor; the actor goes on
  };
  kind what = kind::failed;
  std::string class_name;            ///< the actor's registered class
  int rank = 0;                      ///< its rank in the mesh it was spawned in
  std::vector<std::int64_t> coords;  ///< its coordinates there
  std::string point;                 ///< the coordinates named, `{host: 1, device: 0}`
  int process = 0;                   ///< the process that ran it
  std::string cause;                 ///< the exception's type and text, or the process failure
};

/// `restarted`, `failed`, ...
std::string to_string(supervision_event::kind k);

} // namespace am

#endif // ACTORMESH_ACTOR_MESH_SUPERVISION_HPP
