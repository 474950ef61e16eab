/// Futures resolved from the actor side: a user thread waits on a shared slot that a device or host
/// actor fills, so a blocking call costs no scoped_actor (doc/architecture.md, "Futures").
#ifndef ACTORMESH_ACTORS_FUTURE_HPP
#define ACTORMESH_ACTORS_FUTURE_HPP

#include "actormesh/actors/errors.hpp"
#include "actormesh/actors/detail/ready_word.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace am {

namespace detail {

/// The part of a future's shared state that does not depend on the value type: readiness, the
/// error, waiting and completion callbacks.
class future_state_base {
public:
  /// Virtual: a state may carry more (a shard in another process knows where it lives).
  virtual ~future_state_base() = default;

  /// True once a value or an error has been stored.
  bool ready() const noexcept { return ready_.is_set(); }

  /// Waits until ready: spins briefly (the common case for short device calls), then sleeps.
  void wait() const {
    if (spin_until_ready())
      return;
    ready_.sleep();
  }

  /// Waits at most `timeout`; returns whether the state became ready.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    auto deadline = std::chrono::steady_clock::now()
                    + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
    if (spin_until_ready())
      return true;
    return ready_.sleep_until(deadline);
  }

  /// Runs `callback` once the state is ready: at once on this thread when it already is, else on
  /// the thread that resolves it. Callbacks must be short and must not block.
  void on_ready(std::function<void()> callback) {
    {
      std::lock_guard<tiny_lock> guard(lock_);
      if (!ready()) {
        callbacks_.push_back(std::move(callback));
        return;
      }
    }
    callback();
  }

  /// Rethrows the stored error, if any.
  void rethrow_if_error() const {
    if (error_)
      std::rethrow_exception(error_);
  }

  /// The stored error (null when the state holds a value or is not ready).
  std::exception_ptr error() const noexcept { return ready() ? error_ : nullptr; }

  /// Stores an error and wakes waiters. Returns false when the state was already resolved.
  bool set_error(std::exception_ptr e) {
    return resolve([&] { error_ = std::move(e); });
  }

  /// Counts a promise copy that may still resolve this state.
  void add_writer() noexcept { writers_.fetch_add(1, std::memory_order_relaxed); }

  /// Forgets a promise copy; the last one to go fails the state if nothing resolved it.
  void drop_writer() {
    if (writers_.fetch_sub(1, std::memory_order_acq_rel) == 1 && !ready())
      set_error(std::make_exception_ptr(runtime_error(
        "The call was dropped before it produced a result: the runtime stopped or its actor is gone")));
  }

protected:
  /// Runs `store` under the lock unless already resolved, then publishes and wakes everyone.
  template <class Store>
  bool resolve(Store&& store) {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard<tiny_lock> guard(lock_);
      if (resolved_)
        return false;
      resolved_ = true;
      store();
      ready_.publish(); // readers that see the flag see the store
      callbacks.swap(callbacks_);
    }
    ready_.wake();
    for (auto& f : callbacks)
      f();
    return true;
  }

private:
  /// Waits briefly before blocking, bounded by time rather than by a count of instructions (a
  /// `pause` takes very different times on different CPUs): spins for about 2 us, where a local
  /// device actor usually answers, then yields for up to 100 us, so the threads carrying a slower
  /// answer (CAF's networking and scheduler threads, on a machine with few cores) get the core.
  /// Measured on the cluster barrier: doc/performance.md, "Why the missed targets are missed,
  /// measured, and what would close them".
  bool spin_until_ready() const {
    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    for (int i = 0;; ++i) {
      if (ready())
        return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if ((i & 63) == 63 && clock::now() - start > std::chrono::microseconds(2))
        break;
    }
    while (clock::now() - start < std::chrono::microseconds(100)) {
      if (ready())
        return true;
      std::this_thread::yield();
    }
    return ready();
  }

  ready_word ready_;     ///< set once resolved; waiters sleep on it
  tiny_lock lock_;       ///< guards resolved_, the stored value or error, and callbacks_
  std::atomic<int> writers_{0};
  bool resolved_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void()>> callbacks_;
};

/// Shared state holding a value of type T.
template <class T>
class future_state : public future_state_base {
public:
  /// Stores the value and wakes waiters. Returns false when already resolved.
  bool set_value(T value) {
    return resolve([&] { value_.emplace(std::move(value)); });
  }

  /// The value; only valid once ready and without error.
  const T& value() const {
    rethrow_if_error();
    return *value_;
  }

  /// The value moved out (for the last holder of the state only); only valid once ready and
  /// without error.
  T take_value() {
    rethrow_if_error();
    return std::move(*value_);
  }

private:
  std::optional<T> value_;
};

/// Shared state of a future<void>.
template <>
class future_state<void> : public future_state_base {
public:
  /// Marks the state done and wakes waiters. Returns false when already resolved.
  bool set_value() {
    return resolve([] {});
  }

  /// Throws the stored error, if any.
  void value() const { rethrow_if_error(); }
  void take_value() const { rethrow_if_error(); }
};

} // namespace detail

/// A value that an actor will provide. Copies share the state (like std::shared_future).
///
/// `get()` blocks; `get(timeout)` throws am::timeout_error when the value does not come in time.
template <class T>
class future {
public:
  using state_ptr = std::shared_ptr<detail::future_state<T>>;
  /// What get() gives on a temporary future: the value itself, or a reference for a type that
  /// cannot be copied (its state may be shared, so it cannot be moved out).
  using temporary_result =
    std::conditional_t<std::is_void_v<T> || std::is_copy_constructible_v<T>, T, std::add_lvalue_reference_t<const T>>;

  /// An invalid future (no state).
  future() = default;

  /// Wraps a state; used by promise.
  explicit future(state_ptr state) : state_(std::move(state)) {}

  /// True when the future has a state.
  bool valid() const noexcept { return state_ != nullptr; }

  /// True when the value or an error is there.
  bool ready() const { return state().ready(); }

  /// Blocks until the value or an error is there.
  void wait() const { state().wait(); }

  /// Blocks at most `timeout`; returns whether the result is there.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return state().wait_for(timeout);
  }

  /// Blocks, then returns the value (a reference into the shared state, valid while a future of
  /// it lives) or rethrows the error.
  decltype(auto) get() const& {
    wait();
    return state().value();
  }

  /// On a temporary future (`mesh.call(...).get()`): blocks, then returns the value itself (moved
  /// out when no other future or promise shares it, else a copy), so that what the caller keeps,
  /// or iterates in a range-for, outlives the future.
  temporary_result get() && {
    wait();
    return value_of_temporary();
  }

  /// Like get(), but throws am::timeout_error after `timeout`.
  template <class Rep, class Period>
  decltype(auto) get(std::chrono::duration<Rep, Period> timeout) const& {
    wait_or_throw(timeout);
    return state().value();
  }

  /// Like get() on a temporary future, but throws am::timeout_error after `timeout`.
  template <class Rep, class Period>
  temporary_result get(std::chrono::duration<Rep, Period> timeout) && {
    wait_or_throw(timeout);
    return value_of_temporary();
  }

  /// Runs `callback` when ready (at once if it already is). Must not block.
  void on_ready(std::function<void()> callback) const { state().on_ready(std::move(callback)); }

  /// The shared state, for the runtime.
  const state_ptr& shared_state() const noexcept { return state_; }

private:
  template <class Rep, class Period>
  void wait_or_throw(std::chrono::duration<Rep, Period> timeout) const {
    if (!wait_for(timeout))
      throw timeout_error("Timed out after " + std::to_string(
                            std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count())
                          + " ms waiting for a result");
  }

  /// The value of a ready state this temporary future holds.
  temporary_result value_of_temporary() {
    if constexpr (std::is_void_v<T>) {
      state().value();
    } else if constexpr (std::is_copy_constructible_v<T>) {
      if (state_.use_count() == 1)
        return state().take_value(); // nobody else can read it
      return state().value();
    } else {
      return state().value();
    }
  }

  detail::future_state<T>& state() const {
    if (!state_)
      throw runtime_error("Use of an invalid (default-constructed) future");
    return *state_;
  }

  state_ptr state_;
};

/// The writing end of a future: an actor resolves it exactly once. Copies share the state; when
/// every copy is gone without a result, the future fails with am::runtime_error (a broken promise:
/// a message dropped because its actor stopped must not leave its caller waiting forever).
template <class T>
class promise {
public:
  /// Creates a fresh shared state.
  promise() : state_(std::make_shared<detail::future_state<T>>()) { state_->add_writer(); }

  /// Writes `state`, made by the caller (a derived state that carries more than the value).
  explicit promise(std::shared_ptr<detail::future_state<T>> state) : state_(std::move(state)) {
    if (state_)
      state_->add_writer();
  }

  promise(const promise& other) : state_(other.state_) {
    if (state_)
      state_->add_writer();
  }

  promise(promise&& other) noexcept = default;

  promise& operator=(promise other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }

  ~promise() {
    if (state_)
      state_->drop_writer();
  }

  /// The future reading this promise.
  future<T> get_future() const { return future<T>(state_); }

  /// Stores the value. Returns false when already resolved.
  template <class... Args>
  bool set_value(Args&&... args) const {
    return state_->set_value(std::forward<Args>(args)...);
  }

  /// Stores an error. Returns false when already resolved.
  bool set_error(std::exception_ptr e) const { return state_->set_error(std::move(e)); }

private:
  std::shared_ptr<detail::future_state<T>> state_;
};

/// Waits for every future in `fs`; with a timeout, throws am::timeout_error when one is late.
template <class T>
void wait_all(const std::vector<future<T>>& fs) {
  for (auto& f : fs)
    f.wait();
}

} // namespace am

#endif // ACTORMESH_ACTORS_FUTURE_HPP
