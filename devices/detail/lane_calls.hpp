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

} // namespace am::detail
