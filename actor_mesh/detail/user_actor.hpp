/// The CAF actor that holds one user actor's instance: detached (an endpoint may block on a future,
/// sleep or do I/O without holding up anyone else), constructing the instance first thing,
/// running tasks in arrival order, and asking its mesh what to do when the instance fails.
/// Internal; only .cpp files include it.
#pragma once

#include "actormesh/actor_mesh/detail/mesh_core.hpp"
#include "actormesh/actor_mesh/detail/task_inbox.hpp"
#include "actormesh/actor_mesh/this_actor.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace am::detail {

struct actor_cell;
class coroutine_call_base;

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
  task_inbox inbox;                            ///< the tasks posted to it, not yet taken
  std::atomic<int> in_flight{0};               ///< tasks posted and not yet finished
  std::atomic<bool> halted{false};             ///< the runtime stops: run no more tasks
  std::atomic<int> coroutine_calls{0};         ///< coroutine calls started and not yet answered
  /// The coroutine calls started and not yet finished (the actor's thread only).
  std::vector<std::shared_ptr<coroutine_call_base>> coroutines;
  std::deque<std::chrono::steady_clock::time_point> restarts; ///< the actor's thread only
  std::weak_ptr<actor_supervisor> supervisor;  ///< the mesh, while a handle to it lives
};

/// Spawns the actor of `cell`; it builds its instance with `factory` before its first task.
caf::actor spawn_user_actor(caf::actor_system& system, std::shared_ptr<actor_cell> cell,
                            std::shared_ptr<const actor_factory> factory);

/// Wakes the actor to take its inbox's tasks (after a push that found it idle).
void send_wake(const caf::actor& actor);

/// Tells the actor to run the tasks queued in its inbox, then refuse every later task with
/// `error` and destroy its instance.
void send_fail(const caf::actor& actor, std::exception_ptr error);

/// Tells the actor to run the tasks queued in its inbox, then destroy its instance and stop;
/// `done` runs once it has (on its thread).
void send_stop(const caf::actor& actor, std::function<void()> done);

/// Stops the actor of `cell` at once: the task it runs ends, the tasks still in its inbox (and in
/// the batch it took) are dropped, failing their calls. The runtime stops.
void send_kill(const caf::actor& actor, actor_cell& cell);

} // namespace am::detail
