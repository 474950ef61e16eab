/// Live counters of the running runtime: per device actor and per host lane, the
/// transfers between processes and each device's memory, as one value you can copy, print or
/// compare. Counting costs one relaxed atomic add per call; only taking a snapshot locks.
/// `actormesh info --watch` prints the same figures for every process of a running cluster.
#ifndef ACTORMESH_OBSERVABILITY_RUNTIME_STATS_HPP
#define ACTORMESH_OBSERVABILITY_RUNTIME_STATS_HPP

#include "actormesh/actors/memory_stats.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am {

/// One device actor of this process.
struct device_activity {
  int device_id = 0;               ///< the device's global id
  std::string device;              ///< its name, as to_string(device) prints it ("CpuDevice(id=0)")
  std::uint64_t calls_queued = 0;  ///< calls queued to it since it started (every caller's lane)
  std::uint64_t calls_done = 0;    ///< calls it has run (or failed) since it started
  std::uint64_t queue_depth = 0;   ///< calls queued and not yet run: calls_queued - calls_done
  /// Calls done per second since this process's previous runtime_stats() (0 on the first one, or
  /// when less than a millisecond passed).
  double calls_per_second = 0;
  bool has_memory = false;         ///< false where the device has no memory statistics (CUDA here)
  memory_stats memory;             ///< its allocator's figures (get_memory_stats) when has_memory
};

/// One host lane of this process: the colocated calls of one caller (a thread here, or a
/// controller's thread in a worker), run in that caller's order.
struct lane_activity {
  std::uint64_t caller = 0;        ///< the caller whose lane this is
  std::uint64_t tasks_queued = 0;  ///< tasks sent to the lane since it was opened
  std::uint64_t tasks_done = 0;    ///< tasks it has run
  std::uint64_t queue_depth = 0;   ///< tasks_queued - tasks_done (the running one included)
  double tasks_per_second = 0;     ///< tasks done per second since the previous runtime_stats()
  bool running = false;            ///< a task is running now
};

/// Shard transfers between processes (multi-controller plans, a single controller's bulk uploads
/// and fetches).
struct transfer_activity {
  std::int64_t bytes_in_flight = 0; ///< payload bytes being sent or received right now
  std::uint64_t bytes_sent = 0;     ///< payload bytes sent since the process started
  std::uint64_t bytes_received = 0; ///< payload bytes received since the process started
  std::uint64_t transfers = 0;      ///< transfers finished since the process started
};

/// What runtime_stats() returns: one process's counters at one moment.
struct runtime_stats_snapshot {
  int process_index = 0;                ///< this process's index in its cluster (0 alone)
  double uptime_seconds = 0;            ///< seconds since the runtime started
  double interval_seconds = 0;          ///< seconds since the previous snapshot (the rates' window)
  std::vector<device_activity> devices; ///< this process's device actors, by id
  std::vector<lane_activity> lanes;     ///< its live host lanes, by caller
  transfer_activity transfers;          ///< its transfers
};

/// The counters of the running runtime in this process. Thread-safe; throws am::runtime_error when
/// no runtime is running.
runtime_stats_snapshot runtime_stats();

} // namespace am

#endif // ACTORMESH_OBSERVABILITY_RUNTIME_STATS_HPP
