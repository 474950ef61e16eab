/// JAX's live_devices: running a block of code on the devices whose processes are alive, with an
/// all-or-nothing outcome across the processes when one fails meanwhile. A function taking the
/// block (JAX's is a context manager; a C++ destructor cannot throw the failure safely).
#ifndef ACTORMESH_MULTIHOST_LIVE_DEVICES_HPP
#define ACTORMESH_MULTIHOST_LIVE_DEVICES_HPP

#include "actormesh/actors/device_info.hpp"

#include <functional>
#include <vector>

namespace am::multihost {

/// Runs `body(live)` where `live` are the `devices` whose processes are alive (sorted by id).
///
/// Barrier-like: it waits until every live process owning one of `devices` has called it (the
/// k-th call of each meets the k-th of the others), and all get the same `live`. On leaving, the
/// same processes meet again: when one of them failed (died, stopped answering, left) before
/// all arrived, every survivor throws am::process_failure_error("Devices failed: {...}") whose
/// failed_devices() lists exactly the failed processes' devices among `devices`; otherwise an
/// exception `body` threw is rethrown (on that process only). The body should make its own
/// communicators over the live processes (am::make_communicator) when it runs collectives.
///
/// Errors: am::runtime_error("Distributed JAX not initialized.") without a running runtime;
/// am::value_error("No devices provided."), ("Provided devices do not have any local devices.");
/// am::timeout_error naming the processes that did not arrive (the collective timeout).
void live_devices(const std::vector<device>& devices, const std::function<void(const std::vector<device>&)>& body);

} // namespace am::multihost

#endif // ACTORMESH_MULTIHOST_LIVE_DEVICES_HPP
