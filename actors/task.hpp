/// Coroutines over actormesh's futures: am::task<T> is a C++20 coroutine that may `co_await` an
/// am::future (an actor's answer, a shard's data), another am::task, or an array's readiness
/// (am::ready in sharding/ready.hpp) without holding a thread while it waits.
///
///     am::task<int> twice(am::actor_mesh<counter> c) {
///       int a = co_await c.call_one(&counter::add, 1); // suspends; the thread goes on
///       int b = co_await c.call_one(&counter::add, 1);
///       co_return a + b;
///     }
///
/// A task is lazy: it starts when awaited, when an actor runs it as a coroutine endpoint
/// (doc/actor_meshes.md, "Coroutine endpoints"), or when am::sync_wait drives it on the calling
/// thread. After a suspension it resumes where it was driven: on its actor's thread (behind the
/// messages queued there; never two pieces of one actor's code at once) or on the sync_wait
/// thread, never on the thread that resolved the awaited future.
#ifndef ACTORMESH_ACTORS_TASK_HPP
#define ACTORMESH_ACTORS_TASK_HPP

#include "actormesh/actors/detail/resume_home.hpp"
#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/future.hpp"

#include <chrono>
#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace am {

template <class T = void>
class task;

namespace detail {

/// The parts of a task's promise that do not depend on its value type.
struct task_promise_base {
  /// The coroutine awaiting this task (resumed when it finishes), or none.
  std::coroutine_handle<> continuation;
  /// Told when the task finishes and nobody awaits it (an actor or sync_wait drives it); it may
  /// destroy the coroutine.
  void (*on_done)(void*) = nullptr;
  void* done_context = nullptr;
  /// What the body threw.
  std::exception_ptr error;

  /// Final suspension: hands control to the awaiting coroutine, or tells the driver.
  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto& p = h.promise();
      if (p.continuation)
        return p.continuation;
      if (p.on_done)
        p.on_done(p.done_context); // may destroy h: nothing below touches it
      return std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };

  std::suspend_always initial_suspend() const noexcept { return {}; }
  final_awaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct task_promise : task_promise_base {
  std::optional<T> value;
  task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& u) {
    value.emplace(std::forward<U>(u));
  }
  /// The result: the value (moved out) or the body's exception.
  T take() {
    if (error)
      std::rethrow_exception(error);
    return std::move(*value);
  }
};

template <>
struct task_promise<void> : task_promise_base {
  task<void> get_return_object() noexcept;
  void return_void() const noexcept {}
  void take() const {
    if (error)
      std::rethrow_exception(error);
  }
};

/// Drives `h` (a task nobody awaits) on this thread until it finishes or `deadline` passes,
/// resuming it and the coroutines it awaits as their futures complete. Returns whether it finished.
bool drive_to_completion(std::coroutine_handle<> h, task_promise_base& promise,
                         std::optional<std::chrono::steady_clock::time_point> deadline);

/// Awaits a future: resumes the coroutine at its current home once the future is ready.
template <class T>
struct future_awaiter {
  future<T> awaited;
  bool await_ready() const { return awaited.ready(); }
  void await_suspend(std::coroutine_handle<> h) const {
    auto home = current_resume_home(); // throws (into the coroutine) where there is none
    awaited.on_ready([home = std::move(home), h] { home->resume_later(h); });
  }
  /// The value (a copy: other holders of the future may read it too), or the future's error.
  T await_resume() const {
    if constexpr (std::is_void_v<T>)
      awaited.get();
    else
      return awaited.get();
  }
};

} // namespace detail

/// A coroutine that produces a T (or nothing, task<void>) and may co_await futures and tasks.
/// Move-only; destroying an unfinished task destroys its coroutine. Await it once.
template <class T>
class [[nodiscard]] task {
public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;
  using handle_type = std::coroutine_handle<promise_type>;

  /// A task without a coroutine (valid() is false).
  task() = default;
  explicit task(handle_type h) noexcept : h_(h) {}
  task(task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  /// True when the task holds a coroutine.
  bool valid() const noexcept { return static_cast<bool>(h_); }

  /// True once the coroutine has finished (returned or thrown).
  bool done() const noexcept { return h_ && h_.done(); }

  /// Awaiting a task runs it here until it suspends; the awaiting coroutine resumes with its result
  /// (or its exception) when it finishes.
  auto operator co_await() const noexcept {
    struct awaiter {
      handle_type h;
      bool await_ready() const noexcept { return !h || h.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) const noexcept {
        h.promise().continuation = awaiting;
        return h;
      }
      T await_resume() const {
        if (!h)
          throw runtime_error("co_await on an empty am::task");
        return h.promise().take();
      }
    };
    return awaiter{h_};
  }

  /// The coroutine, for the library's drivers (an actor, sync_wait).
  handle_type handle() const noexcept { return h_; }

private:
  void reset() noexcept {
    if (h_)
      h_.destroy();
    h_ = {};
  }

  handle_type h_;
};

namespace detail {
template <class T>
task<T> task_promise<T>::get_return_object() noexcept {
  return task<T>(std::coroutine_handle<task_promise<T>>::from_promise(*this));
}
inline task<void> task_promise<void>::get_return_object() noexcept {
  return task<void>(std::coroutine_handle<task_promise<void>>::from_promise(*this));
}
} // namespace detail

/// Awaiting a future suspends the coroutine until the value (or the error) is there; the
/// coroutine resumes on its actor's thread or its sync_wait thread.
template <class T>
detail::future_awaiter<T> operator co_await(future<T> f) {
  return detail::future_awaiter<T>{std::move(f)};
}

/// Runs `t` on this thread until it finishes and returns its result (or throws its exception):
/// the bridge from ordinary code to coroutines, as future::get() is to futures. The thread sleeps
/// while the task waits.
template <class T>
T sync_wait(task<T> t) {
  if (!t.valid())
    throw runtime_error("am::sync_wait on an empty am::task");
  detail::drive_to_completion(t.handle(), t.handle().promise(), std::nullopt);
  return t.handle().promise().take();
}

/// Like sync_wait(t), but throws am::timeout_error after `timeout` (the task is then destroyed
/// where it waits).
template <class T, class Rep, class Period>
T sync_wait(task<T> t, std::chrono::duration<Rep, Period> timeout) {
  if (!t.valid())
    throw runtime_error("am::sync_wait on an empty am::task");
  auto deadline = std::chrono::steady_clock::now()
                  + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  if (!detail::drive_to_completion(t.handle(), t.handle().promise(), deadline))
    throw timeout_error("Timed out after "
                        + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count())
                        + " ms waiting for a task");
  return t.handle().promise().take();
}

} // namespace am

#endif // ACTORMESH_ACTORS_TASK_HPP
