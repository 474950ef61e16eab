/// Stopping an actor ahead of its queued messages, for whoever spawned it (the runtime's own actors,
/// colocated instances, user actors) when the runtime stops.
#pragma once

#include <caf/actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/message_id.hpp>
#include <caf/message.hpp>
#include <caf/system_messages.hpp>

namespace am::detail {

/// Sends `to` an exit (user_shutdown) in CAF's urgent queue: it is handled before the messages
/// already queued, which are then dropped (caf::anon_send_exit queues it behind them).
inline void send_urgent_exit(const caf::actor& to) {
  if (to)
    to->enqueue(nullptr, caf::make_message_id(caf::message_priority::high),
                caf::make_message(caf::exit_msg{to.address(), caf::exit_reason::user_shutdown}), nullptr);
}

} // namespace am::detail
