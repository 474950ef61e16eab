/// Communicators of the running runtime's cluster: the usual way a program gets one, without
/// reaching for the cluster's internals.
#ifndef ACTORMESH_DEVICES_COLLECTIVES_WORLD_HPP
#define ACTORMESH_DEVICES_COLLECTIVES_WORLD_HPP

#include "actormesh/devices/collectives/communicator.hpp"

#include <memory>
#include <string>
#include <vector>

namespace am {

/// A communicator named `name` over `processes` of the current runtime's cluster (all of them when
/// empty), bound to the runtime's data-plane address, with the collective timeout option as its
/// default timeout. Collective: every process in the list makes it with the same name. On the
/// controller of a single-controller cluster an empty list is refused with am::runtime_error (the
/// workers never join). Names starting with "am." are the runtime's own and are refused with
/// am::value_error.
std::unique_ptr<communicator> make_communicator(const std::string& name, std::vector<int> processes = {});

} // namespace am

#endif // ACTORMESH_DEVICES_COLLECTIVES_WORLD_HPP
