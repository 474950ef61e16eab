/// The one way a call enters a device's lane: queue it in an outbox, and send the device a take
/// message when none is pending. User threads use their own outboxes (devices/calls.cpp); a
/// worker's call server keeps one per remote caller, so that each controller thread keeps its own
/// lane on the worker's devices. Internal.
#pragma once

#include "actors/detail/messages.hpp"

#include <memory>

namespace am::detail {

class runtime_impl;
struct device_endpoint;

/// Queues `work` as the next call of lane `box` to the local device behind `ep`. Throws
/// am::runtime_error once the runtime stops (the work's promises then fail as it is dropped).
void send_in_lane(runtime_impl& rt, const device_endpoint& ep, const std::shared_ptr<device_outbox>& box,
                  device_work work);

/// While one is alive on a thread, the take messages of that thread's lane calls wait until the
/// outermost one ends (or `flush()`), then go out together. A sharded operation issues one call per
/// device: sent one by one, each take message wakes a device thread, which on a machine with fewer
/// cores than devices can take the caller's core and run a whole stage before the caller issues the
/// next device's call (measured: an 8192x8192 sum's dispatch, 55-107 us of caller CPU, took
/// 0.85-1.2 ms). Calls are queued at once; only the wake-ups wait, so order is unchanged. The
/// thread must not wait on a call it issued inside the scope without `flush()` first.
class deferred_wakeups {
public:
  deferred_wakeups() noexcept;
  ~deferred_wakeups();
  deferred_wakeups(const deferred_wakeups&) = delete;
  deferred_wakeups& operator=(const deferred_wakeups&) = delete;

  /// Sends the take messages held so far on this thread.
  static void flush() noexcept;
};

} // namespace am::detail
