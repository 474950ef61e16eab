/// Where a suspended coroutine of actormesh resumes (actors/task.hpp): the actor whose coroutine
/// endpoint it runs, or the thread blocked in am::sync_wait. An awaited future's completion never
/// resumes a coroutine on the thread that resolved it (a device actor's or CAF's), which must not
/// run a user's code; it hands the coroutine to the home that was current when it suspended.
/// Internal.
#ifndef ACTORMESH_ACTORS_DETAIL_RESUME_HOME_HPP
#define ACTORMESH_ACTORS_DETAIL_RESUME_HOME_HPP

#include <coroutine>
#include <memory>

namespace am::detail {

/// A place that resumes suspended coroutines on its own thread.
class resume_home : public std::enable_shared_from_this<resume_home> {
public:
  resume_home() = default;
  resume_home(const resume_home&) = delete;
  resume_home& operator=(const resume_home&) = delete;
  virtual ~resume_home() = default;

  /// Resumes `h` later on the home's thread. Any thread may call it; it must not block and must
  /// not resume `h` itself.
  virtual void resume_later(std::coroutine_handle<> h) = 0;
};

/// The home of the coroutine running on this thread; am::runtime_error when there is none (a
/// co_await outside an actor's coroutine endpoint and outside am::sync_wait).
std::shared_ptr<resume_home> current_resume_home();

/// Makes `home` the current home of this thread for the scope (nested scopes restore the outer).
class resume_home_scope {
public:
  explicit resume_home_scope(resume_home* home) noexcept;
  ~resume_home_scope();
  resume_home_scope(const resume_home_scope&) = delete;
  resume_home_scope& operator=(const resume_home_scope&) = delete;

private:
  resume_home* saved_;
};

} // namespace am::detail

#endif // ACTORMESH_ACTORS_DETAIL_RESUME_HOME_HPP
