/// am::distributed::wait_at_barrier across the processes of a multi-controller cluster: the first
/// barrier meets at the mesh supervisor, and every later one is a step of a communicator over every
/// process (communicator::barrier), whose participants check each other without the supervisor.
/// Internal to devices/distributed.cpp.
#pragma once

#include "actormesh/devices/collectives/communicator.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

namespace am::detail {

class runtime_impl;

/// One runtime's barriers. Thread-safe: one barrier at a time per process, in the order the
/// threads reach it (barriers of one process are met in that order everywhere; a different id at
/// the same place is a desync).
class world_barrier {
public:
  /// The runtime's, made on first use (a runtime service).
  static std::shared_ptr<world_barrier> of(runtime_impl& rt);

  explicit world_barrier(runtime_impl& rt) : rt_(rt) {}

  /// Waits until every process has reached the barrier `id`, within `timeout`. Without a working
  /// world communicator (the first barrier, or after one failed) it meets at the supervisor, then
  /// makes one (every process has just met, so every process makes it too).
  void wait(const std::string& id, std::chrono::milliseconds timeout);

private:
  runtime_impl& rt_;
  std::mutex mutex_;
  std::unique_ptr<communicator> world_;
  int made_ = 0; ///< world communicators made so far (each has its own name)
};

} // namespace am::detail
