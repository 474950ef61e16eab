/// The communicator over every process of the cluster that the multihost utilities share. Internal.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

namespace am::detail {

/// The current runtime's communicator over all processes, named "am.multihost": made on the
/// first call (collectively: every process makes it with its first multihost utility, which every
/// process calls in the same order), kept until the runtime stops. Thread-safe. Throws
/// am::runtime_error when no runtime is running, and the communicator's errors.
communicator& world_communicator();

} // namespace am::detail
