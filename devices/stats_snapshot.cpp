// am::runtime_stats() (observability/runtime_stats.hpp): reads the live counters
// (observability/stats_counters.hpp) and each device's memory, and turns counts into rates against
// the previous snapshot taken in this process. It lives on the devices/ floor because it reads the
// running runtime, which observability/ (a floor below) cannot see.
#include "actormesh/observability/runtime_stats.hpp"

#include "devices/runtime_context.hpp"
#include "devices/stats_snapshot.hpp"
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

namespace detail {

runtime_counters read_runtime_counters(const runtime_context& rt) {
  runtime_counters out;
  auto& s = out.snapshot;
  s.process_index = rt.process_index();
  auto& tc = stats::transfers();
  s.transfers.bytes_in_flight = std::max<std::int64_t>(0, tc.bytes_in_flight.load(std::memory_order_relaxed));
  s.transfers.bytes_sent = tc.bytes_sent.load(std::memory_order_relaxed);
  s.transfers.bytes_received = tc.bytes_received.load(std::memory_order_relaxed);
  s.transfers.transfers = tc.transfers.load(std::memory_order_relaxed);
  const auto now = steady_ns();
  std::int64_t earliest = now;
  for (auto& d : stats::read_devices()) {
    device_activity a;
    a.device_id = d.id;
    a.device = d.name;
    a.calls_queued = d.queued;
    a.calls_done = d.executed;
    a.queue_depth = depth(d.queued, d.executed);
    try {
      a.memory = rt.device_memory_stats(d.id);
      a.has_memory = true;
    } catch (const std::exception&) {
      a.has_memory = false; // CUDA devices have no statistics in this build
    }
    earliest = std::min(earliest, d.started_ns);
    out.device_started_ns.push_back(d.started_ns);
    s.devices.push_back(std::move(a));
  }
  for (auto& l : stats::read_lanes()) {
    lane_activity a;
    a.caller = l.caller;
    a.tasks_queued = l.queued;
    a.tasks_done = l.done;
    a.queue_depth = depth(l.queued, l.done);
    a.running = l.running;
    s.lanes.push_back(a);
  }
  s.uptime_seconds = static_cast<double>(now - earliest) * 1e-9;
  return out;
}

} // namespace detail

runtime_stats_snapshot runtime_stats() {
  auto rt = detail::current_context();
  auto counters = detail::read_runtime_counters(*rt);
  auto s = std::move(counters.snapshot);
  const auto now = steady_ns();
  auto& prev = previous();
  std::lock_guard<std::mutex> guard(prev.mutex);
  const double interval = prev.at_ns > 0 ? static_cast<double>(now - prev.at_ns) * 1e-9 : 0.0;
  s.interval_seconds = interval;
  std::map<int, std::pair<std::int64_t, std::uint64_t>> device_counts;
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    auto& a = s.devices[i];
    const auto started = counters.device_started_ns[i];
    auto it = prev.devices.find(a.device_id);
    // A device that restarted since (another runtime) has no earlier count to compare with.
    if (it != prev.devices.end() && it->second.first == started)
      a.calls_per_second = rate(a.calls_done, it->second.second, interval);
    device_counts[a.device_id] = {started, a.calls_done};
  }
  std::map<std::uint64_t, std::uint64_t> lane_counts;
  for (auto& a : s.lanes) {
    auto it = prev.lanes.find(a.caller);
    if (it != prev.lanes.end())
      a.tasks_per_second = rate(a.tasks_done, it->second, interval);
    lane_counts[a.caller] = a.tasks_done;
  }
  prev.at_ns = now;
  prev.devices = std::move(device_counts);
  prev.lanes = std::move(lane_counts);
  return s;
}

} // namespace am
