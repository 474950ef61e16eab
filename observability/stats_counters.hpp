/// The live counters behind am::runtime_stats(): what the hot paths bump. Every
/// update is one relaxed atomic operation on a counter found without a lock (devices by id in a
/// fixed table, lanes through a pointer their owner keeps); only creating a lane's counters and
/// taking a snapshot lock. Internal: users read am::runtime_stats() (observability/runtime_stats.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace am::detail::stats {

/// Devices with ids below this are counted; a device of a larger id is not (its counters read 0).
inline constexpr int max_counted_devices = 4096;

/// One device actor's counters: callers write `queued`, the device thread `executed`, each on a
/// cache line of its own so that neither side's add invalidates the other's line.
struct device_counters {
  alignas(64) std::atomic<std::uint64_t> queued{0};   ///< calls queued in a lane to the device, since it started
  alignas(64) std::atomic<std::uint64_t> executed{0}; ///< calls the device ran or failed, since it started
};

/// The counters of device `id`, or null when `id` is outside [0, max_counted_devices). Lock-free.
device_counters* device(int id) noexcept;

/// A device actor for `id` starts (call it before any call can be queued to it): its counters
/// restart at 0 and snapshots list it as `name`. Returns the start's number for device_stopped.
std::uint64_t device_started(int id, const std::string& name);

/// The device actor of start `generation` for `id` has stopped: snapshots no longer list it (a
/// later start of the same id, a new runtime's, is left listed).
void device_stopped(int id, std::uint64_t generation);

/// One host lane's counters (the tasks of one caller in the host actor), kept alive by its worker
/// and by every sender that cached the pointer.
struct alignas(64) lane_counters {
  std::uint64_t caller = 0;              ///< the caller whose lane this is
  std::atomic<std::uint64_t> queued{0};  ///< tasks sent to the lane
  std::atomic<std::uint64_t> done{0};    ///< tasks the lane ran (or dropped at stop)
  std::atomic<bool> running{false};      ///< a task is running now
  std::atomic<bool> retired{false};      ///< the lane's worker has ended
};

/// New counters for the lane of `caller`, listed by snapshots until retired (the registry holds
/// them weakly; retired lanes are forgotten at the next snapshot).
std::shared_ptr<lane_counters> open_lane(std::uint64_t caller);

/// The counters of the live lane of `caller`, or null (the sender's side looks them up once).
std::shared_ptr<lane_counters> find_lane(std::uint64_t caller);

/// The transfers between processes (devices/collectives/shard_transfers.cpp).
struct transfer_counters {
  std::atomic<std::int64_t> bytes_in_flight{0}; ///< payload bytes being sent or received now
  std::atomic<std::uint64_t> bytes_sent{0};     ///< payload bytes sent, since the process started
  std::atomic<std::uint64_t> bytes_received{0}; ///< payload bytes received, since the process started
  std::atomic<std::uint64_t> transfers{0};      ///< transfers finished (either direction)
};

/// The process's transfer counters.
transfer_counters& transfers() noexcept;

/// Counts `bytes` as in flight for its lifetime, and as sent or received when done() was called.
class transfer_in_flight {
public:
  transfer_in_flight(std::uint64_t bytes, bool sending) noexcept;
  ~transfer_in_flight();
  transfer_in_flight(const transfer_in_flight&) = delete;
  transfer_in_flight& operator=(const transfer_in_flight&) = delete;
  /// The bytes have moved.
  void done() noexcept { done_ = true; }

private:
  std::uint64_t bytes_;
  bool sending_;
  bool done_ = false;
};

/// A device as a snapshot sees it.
struct device_reading {
  int id = 0;
  std::string name;
  std::uint64_t queued = 0;
  std::uint64_t executed = 0;
  std::int64_t started_ns = 0; ///< when its actor started (steady clock, nanoseconds)
};

/// A lane as a snapshot sees it.
struct lane_reading {
  std::uint64_t caller = 0;
  std::uint64_t queued = 0;
  std::uint64_t done = 0;
  bool running = false;
};

/// The started devices, by id.
std::vector<device_reading> read_devices();

/// The live lanes, by caller.
std::vector<lane_reading> read_lanes();

} // namespace am::detail::stats
