// am::runtime_stats() (observability/runtime_stats.hpp): reads the live counters
// (observability/stats_counters.hpp) and each device's memory, and turns counts into rates against
// the previous snapshot taken in this process. It lives on the devices/ floor because it reads the
// running runtime, which observability/ (a floor below) cannot see.
#include "actormesh/observability/runtime_stats.hpp"

#include "devices/runtime_context.hpp"
#include "observability/stats_counters.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

namespace am {

namespace {

/// The previous snapshot's counts, for the rates.
struct previous_counts {
  std::mutex mutex;
  std::int64_t at_ns = 0;
  std::map<int, std::pair<std::int64_t, std::uint64_t>> devices; ///< id -> (start, done)
  std::map<std::uint64_t, std::uint64_t> lanes;                  ///< caller -> done
};

previous_counts& previous() {
  static previous_counts p;
  return p;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

std::uint64_t depth(std::uint64_t queued, std::uint64_t done) { return queued > done ? queued - done : 0; }

double rate(std::uint64_t now, std::uint64_t before, double seconds) {
  return seconds >= 1e-3 && now >= before ? static_cast<double>(now - before) / seconds : 0.0;
}

} // namespace

runtime_stats_snapshot runtime_stats() {
  auto rt = detail::current_context();
  runtime_stats_snapshot s;
  s.process_index = rt->process_index();
  auto devices = detail::stats::read_devices();
  auto lanes = detail::stats::read_lanes();
  auto& tc = detail::stats::transfers();
  s.transfers.bytes_in_flight = std::max<std::int64_t>(0, tc.bytes_in_flight.load(std::memory_order_relaxed));
  s.transfers.bytes_sent = tc.bytes_sent.load(std::memory_order_relaxed);
  s.transfers.bytes_received = tc.bytes_received.load(std::memory_order_relaxed);
  s.transfers.transfers = tc.transfers.load(std::memory_order_relaxed);
  auto now = steady_ns();
  auto& prev = previous();
  std::lock_guard<std::mutex> guard(prev.mutex);
  double interval = prev.at_ns > 0 ? static_cast<double>(now - prev.at_ns) * 1e-9 : 0.0;
  s.interval_seconds = interval;
  std::int64_t earliest = now;
  std::map<int, std::pair<std::int64_t, std::uint64_t>> device_counts;
  for (auto& d : devices) {
    device_activity a;
    a.device_id = d.id;
    a.device = d.name;
    a.calls_queued = d.queued;
    a.calls_done = d.executed;
    a.queue_depth = depth(d.queued, d.executed);
    auto it = prev.devices.find(d.id);
    // A device that restarted since (another runtime) has no earlier count to compare with.
    if (it != prev.devices.end() && it->second.first == d.started_ns)
      a.calls_per_second = rate(d.executed, it->second.second, interval);
    try {
      a.memory = rt->device_memory_stats(d.id);
      a.has_memory = true;
    } catch (const std::exception&) {
      a.has_memory = false; // CUDA devices have no statistics in this build
    }
    earliest = std::min(earliest, d.started_ns);
    device_counts[d.id] = {d.started_ns, d.executed};
    s.devices.push_back(std::move(a));
  }
  std::map<std::uint64_t, std::uint64_t> lane_counts;
  for (auto& l : lanes) {
    lane_activity a;
    a.caller = l.caller;
    a.tasks_queued = l.queued;
    a.tasks_done = l.done;
    a.queue_depth = depth(l.queued, l.done);
    a.running = l.running;
    auto it = prev.lanes.find(l.caller);
    if (it != prev.lanes.end())
      a.tasks_per_second = rate(l.done, it->second, interval);
    lane_counts[l.caller] = l.done;
    s.lanes.push_back(a);
  }
  s.uptime_seconds = static_cast<double>(now - earliest) * 1e-9;
  prev.at_ns = now;
  prev.devices = std::move(device_counts);
  prev.lanes = std::move(lane_counts);
  return s;
}

} // namespace am
