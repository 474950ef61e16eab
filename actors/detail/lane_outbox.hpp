/// The sending end of one caller's lane to one actor: calls queue here, and one message tells the
/// actor to take everything queued. While that message is pending, further calls only queue, so a
/// caller issuing calls faster than the actor runs them pays one CAF message per batch, not per call.
/// Order is kept: one caller's calls go through its one outbox, taken in FIFO order.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

namespace am::detail {

/// A FIFO of calls from one thread to one actor; thread-safe between that thread and the actor.
template <class Call>
class lane_outbox {
public:
  /// Queues `call`. Returns true when the caller must send a take message (none is pending). On a
  /// closed outbox the call is dropped here (its promises fail) and false is returned.
  bool push(Call call) {
    std::unique_lock<std::mutex> guard(mutex_);
    if (closed_) {
      guard.unlock();
      return false; // `call` is destroyed here, outside the lock
    }
    calls_.push_back(std::move(call));
    if (take_pending_)
      return false;
    take_pending_ = true;
    return true;
  }

  /// Everything queued, in order; the next push sends a new take message.
  std::vector<Call> take() {
    std::vector<Call> out;
    std::lock_guard<std::mutex> guard(mutex_);
    out.swap(calls_);
    take_pending_ = false;
    return out;
  }

  /// True once closed.
  bool closed() {
    std::lock_guard<std::mutex> guard(mutex_);
    return closed_;
  }

  /// Drops everything queued and refuses later calls (the actor is gone).
  void close() {
    std::vector<Call> dropped;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      closed_ = true;
      dropped.swap(calls_);
    }
  }

private:
  std::mutex mutex_;
  std::vector<Call> calls_;
  bool take_pending_ = false;
  bool closed_ = false;
};

} // namespace am::detail
