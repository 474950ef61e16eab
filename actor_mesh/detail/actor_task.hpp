/// One message to a user actor, type-erased: the typed call sites (actor_mesh.hpp) make them, the
/// actor runs them with its instance. Internal.
#pragma once

#include <exception>
#include <memory>

namespace am::detail {

/// A call (or a one-way message) for one actor. Exactly one of run() and refuse() is called, once,
/// on the actor's thread; a task dropped unrun (the runtime stopped) breaks its promise.
class actor_task {
public:
  virtual ~actor_task() = default;
  /// Runs the endpoint on `instance` (a T*) and resolves the task's promise. Returns the exception
  /// when the endpoint threw am::actor_fault (the actor then fails), else null.
  virtual std::exception_ptr run(void* instance) noexcept = 0;
  /// The actor cannot run it (it failed or stopped): fails the task with `error`.
  virtual void refuse(const std::exception_ptr& error) noexcept = 0;
  /// True for a one-way message (broadcast): an exception it throws is reported to the mesh's owner,
  /// as nobody waits for it.
  virtual bool one_way() const noexcept { return false; }
};

using task_ptr = std::shared_ptr<actor_task>;

/// "am::actor_fault: the loader is gone": the exception's type (demangled) and text.
std::string describe_exception(const std::exception_ptr& e);

} // namespace am::detail
