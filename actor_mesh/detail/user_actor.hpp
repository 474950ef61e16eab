/// The CAF actor that holds one user actor's instance: detached (an endpoint may block on a future,
/// sleep or do I/O without holding up anyone else), constructing the instance first thing,
/// running tasks in arrival order, and asking its mesh what to do when the instance fails.
/// Internal; only .cpp files include it.
#pragma once

#include "actormesh/actor_mesh/detail/mesh_core.hpp"
#include "actormesh/actor_mesh/this_actor.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>

namespace am::detail {

struct actor_cell;

/// What an actor's failure leads to (decided by its mesh's policy).
struct failure_outcome {
  bool restart = false;           ///< build a fresh instance and go on
  std::exception_ptr error;       ///< otherwise: every later task is refused with this
};

/// The mesh's side of its actors' failures (mesh_core implements it; the actors hold it weakly).
class actor_supervisor {
public:
  virtual ~actor_supervisor() = default;
  /// The instance of `cell` failed with `cause` (its constructor or an am::actor_fault); on the
  /// actor's thread.
  virtual failure_outcome actor_failed(actor_cell& cell, const std::exception_ptr& cause) = 0;
  /// A one-way message threw `cause` at the actor of `cell`; on the actor's thread.
  virtual void one_way_failed(actor_cell& cell, const std::exception_ptr& cause) = 0;
};

/// What the mesh and one of its actors share.
struct actor_cell {
  actor_context context;                       ///< the actor's class, mesh and point
  std::atomic<int> in_flight{0};               ///< tasks posted and not yet finished
  std::deque<std::chrono::steady_clock::time_point> restarts; ///< the actor's thread only
  std::weak_ptr<actor_supervisor> supervisor;  ///< the mesh, while a handle to it lives
};

/// Spawns the actor of `cell`; it builds its instance with `factory` before its first task.
caf::actor spawn_user_actor(caf::actor_system& system, std::shared_ptr<actor_cell> cell,
                            std::shared_ptr<const actor_factory> factory);

/// Queues a task (in the sending thread's order).
void send_task(const caf::actor& actor, task_ptr task);

/// Tells the actor to refuse every later task with `error` and destroy its instance, after the
/// tasks queued before.
void send_fail(const caf::actor& actor, std::exception_ptr error);

/// Tells the actor to destroy its instance and stop after the tasks queued before; `done` runs once
/// it has (on its thread).
void send_stop(const caf::actor& actor, std::function<void()> done);

/// Stops the actor at once (its queued tasks are dropped, their promises break): the runtime stops.
void send_kill(const caf::actor& actor);

} // namespace am::detail
