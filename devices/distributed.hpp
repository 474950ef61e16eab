/// The distributed runtime's client services, as JAX's DistributedRuntimeClient offers them: named
/// barriers and a key-value store (through the mesh supervisor on the coordinator). Every process
/// of the cluster may call them from any thread; in local mode they work inside the one process.
#ifndef ACTORMESH_DEVICES_DISTRIBUTED_HPP
#define ACTORMESH_DEVICES_DISTRIBUTED_HPP

#include <chrono>
#include <optional>
#include <string>

namespace am::distributed {

/// Waits until every process of the cluster has reached the barrier `barrier_id`. A process's
/// barriers are met in the order it issues them (from several threads: one at a time, in the order
/// they come), so the k-th barrier of every process must have the same id: a different one is an
/// am::desync_error naming who issued what. Throws am::timeout_error naming the processes that did
/// not arrive within `timeout` (default: the collective timeout option), and
/// am::process_failure_error when a process has failed or left. The first barrier meets at the
/// mesh supervisor; later ones go between the processes directly (doc/multihost.md). On the controller of a
/// single-controller cluster it throws am::runtime_error at once (the workers run no program).
void wait_at_barrier(const std::string& barrier_id, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

/// Stores `value` under `key` in the coordinator's store (overwrites).
void key_value_set(const std::string& key, const std::string& value);

/// The value of `key`, waiting until some process sets it; am::timeout_error after `timeout`.
std::string blocking_key_value_get(const std::string& key, std::chrono::milliseconds timeout);

} // namespace am::distributed

#endif // ACTORMESH_DEVICES_DISTRIBUTED_HPP
