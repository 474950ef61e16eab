/// The CPU device: a device actor whose executor compiles programs once (cpu_compiler.hpp) and runs
/// them on host memory from the device's pool.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actors/detail/stop_signal.hpp"
#include "devices/detail/buffer_pool.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>

namespace am::detail {

/// Spawns the detached device actor of CPU device `dev`, allocating from `pool`; it stops starting
/// calls once `stop` is raised.
caf::actor spawn_cpu_device(caf::actor_system& system, const device& dev, std::shared_ptr<buffer_pool> pool,
                            stop_signal_ptr stop);

} // namespace am::detail
