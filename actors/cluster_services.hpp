/// What the cluster offers the floors above the supervisor: a key-value store for rendezvous and
/// the sequencing check of collectives. Implemented by the process's cluster client (calls go to
/// the mesh supervisor); every call blocks its (user or worker) thread, never an actor's handler.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace am::detail {

/// The cluster's services as seen from one process. Thread-safe.
///
/// Errors: am::timeout_error when the deadline passes (naming the processes that did not arrive
/// where that applies), am::process_failure_error when a process involved (or the coordinator) has
/// failed, am::desync_error when participants disagree.
class cluster_services {
public:
  virtual ~cluster_services() = default;

  /// This process's index and the number of processes.
  virtual int process_index() const noexcept = 0;
  virtual int process_count() const noexcept = 0;

  /// Stores `value` under `key` (overwrites). Returns once the supervisor has it.
  virtual void kv_set(const std::string& key, const std::string& value) = 0;

  /// The value of `key`, waiting until some process sets it or `timeout` passes.
  virtual std::string kv_get(const std::string& key, std::chrono::milliseconds timeout) = 0;

  /// Waits until every key in `keys` has a value.
  virtual void kv_wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  /// Checks the `step`-th collective of communicator `communicator` (a name every participant
  /// derives the same way, e.g. from its sorted process list) against every participant's:
  /// `participants` are the process indices taking part, `signature` a printable description
  /// ("all_reduce(sum) float32[1024] name=grads"). Returns when all have issued the same; throws
  /// am::desync_error on every participant, naming who issued what, when they differ; throws
  /// am::timeout_error naming the processes that never issued it.
  virtual void check_collective(const std::string& communicator, std::uint64_t step,
                                const std::vector<int>& participants, const std::string& signature,
                                std::chrono::milliseconds timeout) = 0;

  /// The named barrier across every process.
  virtual void barrier(const std::string& name, std::chrono::milliseconds timeout) = 0;

  /// Throws am::process_failure_error if any of `processes` (or the coordinator) has failed.
  virtual void check_alive(const std::vector<int>& processes) const = 0;

  /// Why process `p` failed, if the cluster has said it did.
  virtual std::optional<std::string> failure_of(int p) const = 0;

  /// The cluster's shared secret ("" when it has none): the collectives' data plane derives the
  /// keys its connections prove from it, so that a stranger cannot take a peer's place there.
  virtual const std::string& secret() const noexcept = 0;
};

} // namespace am::detail
