/// Which devices this process can run work on (multi-controller: its own), and what stands in for
/// another process's shard here.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"

namespace am::detail {

/// True when this process runs work on `d`: its own devices (always, in local mode), and every
/// device on the controller of a single-controller cluster.
bool is_addressable(const device& d);

/// True when this process issues the work of every device: the controller of a single-controller
/// cluster, or a runtime of one process.
bool drives_every_device();

/// The shard future of another process's device: failed with an error that says the data lives
/// in that process. Work on this process never waits on it; a use that needs its data fails
/// with that error instead of hanging. Throws am::value_error for a descriptor the cluster does
/// not have (made up or stale), as a call to a local device would.
shard_future remote_shard(const device& d);

} // namespace am::detail
