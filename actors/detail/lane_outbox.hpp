/// The sending end of one caller's lane to one actor: calls queue here, and one message tells the
/// actor to take everything queued. While that message is pending, further calls only queue, so a
/// caller issuing calls faster than the actor runs them pays one CAF message per batch, not per call.
/// Order is kept: one caller's calls go through its one outbox, taken in FIFO order.
#pragma once

#include "actormesh/actors/lane.hpp"

#include <mutex>
#include <utility>
#include <deque>

namespace am::detail {

/// A FIFO of calls from one thread to one actor; thread-safe between that thread and the actor.
/// The outbox numbers the calls (its caller's lane to its actor), so `Call` is built from a
/// call_header and the work.
template <class Call>
class lane_outbox {
public:
  /// The outbox of `caller`'s lane; sequence numbers start at 0.
  explicit lane_outbox(caller_id caller) : caller_(caller) {}

  /// Queues `work` as the next call of the lane. Returns true when the caller must send a take
  /// message (none is pending). On a closed outbox the work is dropped here (its promises fail) and
  /// false is returned. When `queued_as` is given, the call's header is stored there once queued
  /// (a trace names the call by it); it is left as it was when the outbox is closed.
  template <class Work>
  bool push(Work&& work, call_header* queued_as = nullptr) {
    std::unique_lock<std::mutex> guard(mutex_);
    if (closed_) {
      guard.unlock();
      return false; // `work` is destroyed by the caller, outside the lock
    }
    const call_header header{caller_, next_seq_++};
    if (queued_as != nullptr)
      *queued_as = header;
    calls_.push_back(Call{header, std::forward<Work>(work)});
    if (take_pending_)
      return false;
    take_pending_ = true;
    return true;
  }

  /// Moves everything queued, in order, into `into` (cleared first); the next push sends a new take
  /// message. A deque, because a caller far ahead of its device queues long batches: a vector
  /// relocated every call on growth, which profiling showed as the caller's top cost.
  void take(std::deque<Call>& into) {
    into.clear();
    std::lock_guard<std::mutex> guard(mutex_);
    into.swap(calls_);
    take_pending_ = false;
  }

  /// True once closed.
  bool closed() {
    std::lock_guard<std::mutex> guard(mutex_);
    return closed_;
  }

  /// Drops everything queued and refuses later calls (the actor is gone).
  void close() {
    std::deque<Call> dropped;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      closed_ = true;
      dropped.swap(calls_);
    }
  }

private:
  caller_id caller_;
  std::uint64_t next_seq_ = 0;
  std::mutex mutex_;
  std::deque<Call> calls_;
  bool take_pending_ = false;
  bool closed_ = false;
};

} // namespace am::detail
