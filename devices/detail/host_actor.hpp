/// The host actor: runs host-side tasks (colocated calls, process services) in per-caller lanes.
/// Calls of one caller run in the order issued; calls of different callers run concurrently, each
/// lane on its own detached worker. Internal to the runtime.
#pragma once

#include "actors/detail/stop_signal.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace am::detail {

/// Spawns the host actor. It takes host_call messages (run in order of their headers, in the
/// caller's lane) and host_lane_request messages (the caller's lane worker itself, which then takes
/// host_call messages directly and runs them in the order they arrive). Its lane workers are linked to it and stop with it; once `stop` is raised
/// they drop the tasks they have not started (whose futures then fail with am::runtime_error).
caf::actor spawn_host_actor(caf::actor_system& system, int process_index, stop_signal_ptr stop);

} // namespace am::detail
