/// What the controller of a single-controller cluster asks of its workers' hosts: run a host call
/// there (the colocated calls whose devices are the workers'), take the shards its outcome names,
/// free them. No CAF type appears, so the floors above devices/ use it without the runtime's
/// internals; the controller's link to its workers (controller_link.hpp) implements it.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/device_info.hpp"
#include "actormesh/actors/future.hpp"
#include "actormesh/actors/program.hpp"
#include "devices/remote/remote_shard.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace am::detail::remote {

/// How a host call ended on the worker: the service's answer and the handles of the shards it
/// named there (in the order the service gave them).
struct host_outcome {
  std::string payload;
  std::vector<std::uint64_t> handles;
};

/// A host call as the controller issued it: its output shards (futures at once) and its end.
struct host_call_issued {
  std::vector<shard_future> outputs;
  future<host_outcome> done;
};

/// The workers' hosts as the controller reaches them. Thread-safe; called under the runtime's
/// call_guard (runtime_context.hpp), never once the runtime stops.
class worker_hosts : public handle_releaser {
public:
  /// Has worker `process` run `payload` with host service `service` in this thread's host lane
  /// there, over `inputs` (shards of that worker). `outputs` are the devices and types of the
  /// output shards the service promises at once (each a shard of that worker).
  virtual host_call_issued host_call(int process, const std::string& service, std::string payload,
                                     const std::vector<shard_future>& inputs,
                                     const std::vector<std::pair<device, value_type>>& outputs) = 0;

  /// The shard of handle `handle` that a host call's outcome named on worker device `d` (already
  /// computed there), freed there when the controller lets go of it.
  virtual shard_future adopt(const device& d, std::uint64_t handle, const value_type& type) = 0;
};

} // namespace am::detail::remote
