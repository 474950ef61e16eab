/// A call of a coroutine endpoint (one returning am::task<R>) while it runs: it owns the call's
/// arguments, its answer's sink and the coroutine, and is the coroutine's resume home, so every
/// step after a suspension is queued at the actor as a task behind the messages already there.
/// The actor runs other messages meanwhile (as CAF's request(...).then does) but never two pieces
/// of its code at once. Internal.
#ifndef ACTORMESH_ACTOR_MESH_DETAIL_COROUTINE_CALL_HPP
#define ACTORMESH_ACTOR_MESH_DETAIL_COROUTINE_CALL_HPP

#include "actormesh/actor_mesh/detail/actor_self.hpp"
#include "actormesh/actor_mesh/detail/actor_task.hpp"
#include "actormesh/actor_mesh/detail/call_arguments.hpp"
#include "actormesh/actors/detail/resume_home.hpp"
#include "actormesh/actors/task.hpp"

#include <atomic>
#include <coroutine>
#include <exception>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace am::detail {

/// The parts that do not depend on the endpoint's types: stepping the coroutine on the actor,
/// answering once, abandoning it when its actor fails, restarts or stops.
///
/// Its coroutine frame is destroyed only on the actor's thread while the coroutine is suspended
/// (release_frame: a restart, a failure, the actor's exit) or with the call itself, which the actor
/// holds until then: never by a thread that resolved an awaited future, which may be the actor's
/// own thread still inside the coroutine's await_suspend.
class coroutine_call_base : public resume_home {
public:
  explicit coroutine_call_base(bool one_way) noexcept : one_way_(one_way) {}

  /// Queues the next step of the call's coroutine (`h`, where it suspended) at its actor.
  void resume_later(std::coroutine_handle<> h) override;

  /// Resumes `h` on the actor's thread; when the coroutine has finished, answers the call. Returns
  /// what the actor's policy must see first (an am::actor_fault, answered later by abandon(); or
  /// the exception of a one-way call), else null. A call abandoned meanwhile (its instance was
  /// replaced by a restart, failed or exited) is not resumed.
  std::exception_ptr step(std::coroutine_handle<> h);

  /// Fails the call with `error` unless it has answered (any thread; the first answer wins).
  void abandon(const std::exception_ptr& error) noexcept;

  /// Destroys the coroutine where it waits, with its locals. The actor's thread only, outside the
  /// coroutine, after abandon().
  void release_frame() noexcept { destroy_frame(); }

  /// True once the coroutine has returned or thrown.
  bool has_finished() const noexcept { return finished(); }

  /// True for a one-way call (broadcast).
  bool one_way() const noexcept { return one_way_; }

protected:
  /// Starts the call on the running actor with its first step (`top`, null when calling the
  /// endpoint already threw).
  std::exception_ptr begin(std::coroutine_handle<> top);
  /// True when the call has answered (or was abandoned).
  bool answered() const noexcept { return answered_.load(std::memory_order_acquire); }

private:
  virtual bool finished() const noexcept = 0;                 ///< the coroutine has returned or thrown
  virtual std::exception_ptr result_error() const noexcept = 0; ///< what it threw, or null
  virtual void deliver_value() = 0;                            ///< its value to the sink
  virtual void deliver_error(const std::exception_ptr& e) noexcept = 0;
  virtual void destroy_frame() noexcept = 0;

  /// The coroutine has finished: answers, unless it threw an am::actor_fault (returned).
  std::exception_ptr finish();
  /// Claims the answer; false when another thread (or an earlier step) has answered.
  bool claim_answer() noexcept;

  std::shared_ptr<const actor_self> actor_;
  bool one_way_;
  std::atomic<bool> answered_{false};
};

/// The error of a coroutine call whose instance (of `class_name`, at `rank`) a restart replaced.
std::exception_ptr restarted_under_call(const std::string& class_name, int rank);

/// Abandons the calls of `calls` whose coroutines are still suspended with `error` and destroys
/// their frames (the actor's thread: its instance is gone or going); empties `calls`.
void abandon_suspended(std::vector<std::shared_ptr<coroutine_call_base>>& calls, const std::exception_ptr& error);

/// A coroutine endpoint call with its types: member function `pm` of T with arguments held by
/// `Holder`, answering `Sink`.
template <class T, class M, class R, class Holder, class Sink>
class coroutine_call final : public coroutine_call_base {
public:
  coroutine_call(M pm, Holder args, Sink sink)
      : coroutine_call_base(sink.one_way()), pm_(pm), args_(std::move(args)), sink_(std::move(sink)) {}

  /// Dropped unanswered (the actor and its inbox are gone): fails the call.
  ~coroutine_call() override {
    if (!answered())
      abandon(std::make_exception_ptr(
        runtime_error("The actormesh runtime has stopped: the actor was gone before the call finished")));
  }

  /// Calls the endpoint on `instance` (the actor's thread) and runs its coroutine until it first
  /// suspends or finishes. Its parameters refer to this call's own copy of the arguments.
  std::exception_ptr start(void* instance) {
    try {
      auto* self = static_cast<T*>(instance);
      task_ = std::apply([&](const auto&... a) { return (self->*pm_)(a...); }, arguments_of(args_));
    } catch (...) {
      start_error_ = std::current_exception();
    }
    if (!start_error_ && !task_.valid())
      start_error_ = std::make_exception_ptr(runtime_error("a coroutine endpoint returned an empty am::task"));
    return begin(start_error_ ? std::coroutine_handle<>{} : std::coroutine_handle<>(task_.handle()));
  }

private:
  bool finished() const noexcept override { return start_error_ || task_.done(); }
  std::exception_ptr result_error() const noexcept override {
    return start_error_ ? start_error_ : task_.handle().promise().error;
  }
  void deliver_value() override {
    if constexpr (std::is_void_v<R>)
      sink_.set_value();
    else
      sink_.set_value(task_.handle().promise().take());
  }
  void deliver_error(const std::exception_ptr& e) noexcept override { sink_.set_error(e); }
  void destroy_frame() noexcept override { task_ = task<R>(); }

  M pm_;
  Holder args_;
  Sink sink_;
  task<R> task_;
  std::exception_ptr start_error_;
};

/// The next step of a coroutine call, queued at its actor.
class resume_task final : public actor_task {
public:
  resume_task(std::shared_ptr<coroutine_call_base> call, std::coroutine_handle<> h) : call_(std::move(call)), h_(h) {}
  ~resume_task() override;
  resume_task(const resume_task&) = delete;
  resume_task& operator=(const resume_task&) = delete;

  std::exception_ptr run(void* instance) noexcept override;
  void refuse(const std::exception_ptr& error) noexcept override;
  bool one_way() const noexcept override { return call_->one_way(); }

private:
  std::shared_ptr<coroutine_call_base> call_;
  std::coroutine_handle<> h_;
  bool done_ = false;
};

} // namespace am::detail

#endif // ACTORMESH_ACTOR_MESH_DETAIL_COROUTINE_CALL_HPP
