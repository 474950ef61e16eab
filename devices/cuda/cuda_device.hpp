/// The CUDA device: a device actor with one stream whose executor runs programs as kernels.
#pragma once

#include "actormesh/actors/device_info.hpp"
#include "actors/detail/stop_signal.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace am::detail {

/// Spawns the detached device actor of CUDA device `dev` (`dev.local_ordinal` is the CUDA ordinal);
/// it stops starting calls once `stop` is raised.
caf::actor spawn_cuda_device(caf::actor_system& system, const device& dev, stop_signal_ptr stop);

} // namespace am::detail
