/// The signal a runtime raises when it starts stopping, shared with its actors: from then on an
/// actor fails the calls it still holds instead of running them, so stop() waits only for the call
/// each actor is in the middle of (a kernel cannot be interrupted), never for a queue of them.
#pragma once

#include "actormesh/actors/errors.hpp"

#include <atomic>
#include <exception>
#include <memory>

namespace am::detail {

/// Raised once, never lowered.
class stop_signal {
public:
  /// Marks the runtime as stopping; seen by every thread's next raised().
  void raise() noexcept { raised_.store(true, std::memory_order_seq_cst); }

  /// True once the runtime is stopping.
  bool raised() const noexcept { return raised_.load(std::memory_order_seq_cst); }

private:
  std::atomic<bool> raised_{false};
};

/// How actors hold the signal (the runtime owns the other reference).
using stop_signal_ptr = std::shared_ptr<const stop_signal>;

/// The signal of the runtime whose host task this thread is running now, or null: a runtime asked
/// to stop from one of its own host tasks would wait for that task, which waits for the stop.
inline const stop_signal*& host_task_owner() noexcept {
  thread_local const stop_signal* owner = nullptr;
  return owner;
}

/// Marks the calling thread as running a host task of the runtime behind `signal` while alive.
class host_task_scope {
public:
  explicit host_task_scope(const stop_signal* signal) noexcept : previous_(host_task_owner()) {
    host_task_owner() = signal;
  }
  ~host_task_scope() { host_task_owner() = previous_; }
  host_task_scope(const host_task_scope&) = delete;
  host_task_scope& operator=(const host_task_scope&) = delete;

private:
  const stop_signal* previous_;
};

/// The error of a call that had not started when its runtime stopped.
inline std::exception_ptr runtime_stopped_error() {
  return std::make_exception_ptr(
    runtime_error("The actormesh runtime stopped before this call ran: calls still queued at stop() fail"));
}

} // namespace am::detail
