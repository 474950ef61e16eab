/// The CPU device: a device actor whose executor runs programs on host memory.
#pragma once

#include "actors/device_info.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace am::detail {

/// Spawns the detached device actor of CPU device `dev`.
caf::actor spawn_cpu_device(caf::actor_system& system, const device& dev);

} // namespace am::detail
