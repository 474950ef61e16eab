/// The actor whose task runs on this thread, as its coroutine endpoints need it: the way back into
/// its inbox after a suspension, and the registry of coroutine calls
/// that a stop waits for and that a restart, a failure or the actor's exit abandons. The user actor
/// (user_actor.cpp) provides it. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_SELF_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_SELF_HPP

#include "actormesh/actor_mesh/detail/actor_task.hpp"

#include <memory>

namespace am::detail {

class coroutine_call_base;

class actor_self {
public:
  virtual ~actor_self() = default;
  /// Queues `task` behind the tasks already in the actor's inbox, from any thread. When the actor
  /// is gone (or the runtime stops) the task is deleted at once, failing its call.
  virtual void post(task_ptr task) const = 0;
  /// A coroutine call started on the actor (the actor's thread): the actor keeps it until it has
  /// finished, and abandons it if its instance goes first (restart, failure, exit); a stop waits
  /// until every such call has answered.
  virtual void coroutine_started(std::shared_ptr<coroutine_call_base> call) const = 0;
  /// A coroutine call has answered or was abandoned (any thread).
  virtual void coroutine_answered() const = 0;
  /// A coroutine call has finished on the actor's thread: the actor forgets it.
  virtual void coroutine_finished(const coroutine_call_base* call) const = 0;
};

/// The actor running a task on this thread; null outside the tasks of user actors.
std::shared_ptr<const actor_self> running_actor() noexcept;

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_SELF_HPP
