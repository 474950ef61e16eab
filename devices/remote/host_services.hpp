/// Host services: work that a floor above devices/ (colocated calls) has a worker run in its host
/// lanes for the controller (single-controller mode). devices/remote moves the bytes, the shards
/// and the answers; the service (registered by name in every process of the binary) says what the
/// bytes mean. Internal.
#pragma once

#include "actormesh/actors/buffer.hpp"
#include "actormesh/actors/future.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace am::detail::remote {

/// One request, as the worker's service gets it.
struct host_request {
  std::string payload;              ///< the service's own encoding of what to do
  std::vector<shard_future> inputs; ///< the shards the request names, in its order
  std::size_t output_count = 0;     ///< how many output shards the controller has handles for
  /// Queues a task in the host lane of the controller thread that sent the request: one lane per
  /// controller thread, tasks of one lane run in order, lanes run concurrently. Call it only
  /// while the service handles the request (not later, from another thread).
  std::function<void(std::function<void()>)> submit;
};

/// How a host call ended: the service's answer, and shards the controller learns of only now (the
/// worker names them; they must be computed already when the result is set).
struct host_result {
  std::string payload;
  std::vector<shard_future> shards;
};

/// What a service returns at once, before its work has run.
struct host_answer {
  std::vector<shard_future> outputs; ///< exactly output_count, kept under the controller's handles
  future<host_result> done;          ///< resolved when the call has ended, or failed with its error
};

/// A service: takes a request, queues its work (host_request::submit) and answers at once. May
/// throw (the request then fails with that error).
using host_service = std::function<host_answer(host_request)>;

/// Registers service `name` (at static initialization, in every process of the binary); throws
/// am::value_error when the name is taken.
void register_host_service(const std::string& name, host_service service);

/// The service registered as `name`; throws am::value_error when there is none.
host_service find_host_service(const std::string& name);

} // namespace am::detail::remote
