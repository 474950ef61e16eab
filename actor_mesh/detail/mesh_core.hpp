/// A spawned actor mesh as the typed handles (actor_mesh.hpp) use it, without CAF: its actors by
/// rank, posting tasks to them, choosing the least loaded, stopping, supervision events. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_MESH_CORE_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_MESH_CORE_HPP

#include "actormesh/actor_mesh/actor_layout.hpp"
#include "actormesh/actor_mesh/detail/class_registry.hpp"
#include "actormesh/actor_mesh/detail/actor_task.hpp"
#include "actormesh/actor_mesh/supervision.hpp"
#include "actormesh/actors/future.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// What the caller of an actor in another process is told: an error (then `value` is empty) or
/// the encoded value.
using answer_callback = std::function<void(const std::exception_ptr& error, const std::string& value)>;

/// Builds the instance of one point (a T held by a shared_ptr<void>); may throw.
using actor_factory = std::function<std::shared_ptr<void>(const actor_point& point)>;

class mesh_core;

/// How a worker process builds the instances of its points: the key of the travelling constructor
/// (actor_constructor.hpp) and the constructor arguments, encoded when asked (nothing when one of
/// their types cannot travel).
struct remote_construction {
  std::string constructor;
  std::function<std::optional<std::string>()> encode_arguments;
};

/// Spawns one actor per point of `layout` that this process owns, each constructing its instance
/// with `factory` first thing on its own thread. In a multi-controller cluster of several processes
/// every spawn is collective: every process spawns the same meshes in the same order, each
/// constructs its own points, and it returns once every process has. On the controller of a
/// single-controller cluster, each worker owning points is asked to build them (with `remote`),
/// and it returns once every one has; arguments that cannot travel are refused (am::type_error).
std::shared_ptr<mesh_core> spawn_mesh(std::string class_name, const actor_layout& layout, actor_factory factory,
                                      supervision_policy policy,
                                      std::shared_ptr<const std::vector<endpoint_entry>> endpoints,
                                      remote_construction remote);

/// A worker's part of a mesh its controller spawned (worker_meshes.cpp): the actors of the points
/// of `layout` in this process, reachable under `key` at this process's gateway; their
/// supervision events go to process `controller`'s mesh too.
std::shared_ptr<mesh_core> spawn_mesh_part(std::string key, std::string class_name, const actor_layout& layout,
                                           actor_factory factory, supervision_policy policy,
                                           std::shared_ptr<const std::vector<endpoint_entry>> endpoints,
                                           int controller);

/// True when the actor of rank `rank` runs in this process.
bool is_local(const mesh_core& core, int rank);

/// Sends a call of `endpoint` with encoded `arguments` to the actor of rank `rank` in another
/// process; `answer` (null: one-way) is told the answer or the failure.
void post_remote(mesh_core& core, int rank, const std::string& endpoint, std::string arguments, answer_callback answer);

/// Queues `task` at the actor of spawned rank `rank`, behind this thread's earlier tasks to it.
/// A stopped mesh refuses the task at once with am::actor_failure_error.
void post(mesh_core& core, int rank, task_ptr task);

/// Of `ranks`, the one whose actor has the fewest calls queued or running (ties in turn).
int least_loaded(mesh_core& core, const std::vector<int>& ranks);

/// Stops every actor after the tasks already queued; later posts are refused. The future is
/// resolved when every instance has been destroyed. Calling it again returns the same future.
future<void> stop_mesh(mesh_core& core);

/// Sets the function told each supervision event from now on (on the failing actor's thread: it
/// must not block); the events so far are kept in supervision_events().
void on_supervision(mesh_core& core, std::function<void(const supervision_event&)> callback);

/// Every supervision event of the mesh so far.
std::vector<supervision_event> supervision_events(const mesh_core& core);

/// The layout the mesh was spawned with, its points numbered by rank (0, 1, ...) and by their
/// coordinates in it.
const actor_layout& spawned_layout(const mesh_core& core);

/// The registered class name of the mesh's actors.
const std::string& class_name_of(const mesh_core& core);

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_MESH_CORE_HPP
