/// One message to a user actor, type-erased: the typed call sites (actor_mesh.hpp) make them, the
/// actor runs them with its instance. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_TASK_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_TASK_HPP

#include <exception>
#include <memory>

namespace am::detail {

/// A call (or a one-way message) for one actor. Exactly one of run() and refuse() is called, once,
/// on the actor's thread; a task dropped unrun (the runtime stopped) fails its call.
class actor_task {
public:
  actor_task() = default;
  actor_task(const actor_task&) = delete;
  actor_task& operator=(const actor_task&) = delete;
  virtual ~actor_task() = default;
  /// Runs the endpoint on `instance` (a T*) and resolves the task's promise, except when the
  /// endpoint threw am::actor_fault: then it returns that exception and leaves the promise to the
  /// actor, which applies its mesh's policy first and then fails the call with refuse() (so the
  /// caller sees the fault only once a restart or a stopped mesh is in place). A one-way task also
  /// returns any other exception (nobody waits for it). Else null.
  virtual std::exception_ptr run(void* instance) noexcept = 0;
  /// The actor cannot run it (it failed or stopped), or it faulted: fails the task with `error`.
  virtual void refuse(const std::exception_ptr& error) noexcept = 0;
  /// True for a one-way message (broadcast): an exception it throws is reported to the mesh's owner,
  /// as nobody waits for it.
  virtual bool one_way() const noexcept { return false; }

  /// The next task in its actor's inbox (task_inbox.hpp); the inbox's alone.
  actor_task* next_in_inbox = nullptr;
};

/// A task on its way to its actor: owned by whoever holds it, then by the actor's inbox.
using task_ptr = std::unique_ptr<actor_task>;

/// True when `e` holds an am::actor_fault (the actor's state is broken: its policy decides).
bool is_actor_fault(const std::exception_ptr& e);

/// "am::actor_fault: the loader is gone": the exception's type (demangled) and text.
std::string describe_exception(const std::exception_ptr& e);

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_ACTOR_TASK_HPP
