/// Moving a shard's value from the device that computed it to a device of another process that
/// consumes it: the one place that knows how, whichever way the cluster runs. Internal: the plans of
/// sharding/ call it for every value that crosses processes.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/program.hpp"

#include <cstdint>

namespace am::detail {

class runtime_context;

/// Issues this process's part of moving `value`, a shard of device `from` of type `type`, to device
/// `to` of another process; `tag` names the value alike on every process (derived from the plan),
/// so transfers issued in different orders fail with a desync error instead of swapping values.
/// Returns the shard on `to` when this process drives `to`, an empty future otherwise.
///
/// An end whose endpoint orders both ends (a worker's device, on a single-controller cluster's
/// controller) does the whole move. Otherwise every process walks the same plan in the same order:
/// the producer's process sends, the consumer's receives, the others do nothing.
shard_future move_shard(runtime_context& context, const device& from, const shard_future& value, const device& to,
                        const value_type& type, std::uint32_t tag);

} // namespace am::detail
