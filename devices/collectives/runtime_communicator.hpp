/// The runtime's own communicators over its cluster (named "am.<...>", a prefix
/// am::make_communicator refuses to users): the multihost utilities' world communicator, say.
/// Internal.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

#include <memory>
#include <string>
#include <vector>

namespace am::detail {

/// As am::make_communicator, for a name of the runtime's own ("am.multihost"): over `processes`
/// of the current runtime's cluster (all of them when empty), bound to the runtime's data-plane
/// address, with the collective timeout option as its default timeout.
std::unique_ptr<communicator> make_runtime_communicator(const std::string& name, std::vector<int> processes = {});

} // namespace am::detail
