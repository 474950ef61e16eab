#include "observability/stats_counters.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <mutex>

namespace am::detail::stats {

namespace {

/// The device table: counters are allocated on first use and never freed (at most
/// max_counted_devices of them), so a pointer read without a lock stays valid.
struct device_table {
  std::array<std::atomic<device_counters*>, max_counted_devices> slots{};
  std::mutex mutex; // guards names and the allocation of a slot
  std::array<std::string, max_counted_devices> names;
  std::array<bool, max_counted_devices> started{};
  std::array<std::int64_t, max_counted_devices> started_ns{};
  std::array<std::uint64_t, max_counted_devices> generation{};
  std::uint64_t next_generation = 1;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

device_table& table() {
  static auto* t = new device_table; // never destroyed: device threads may count during exit
  return *t;
}

device_counters* slot(device_table& t, int id) {
  auto* c = t.slots[static_cast<std::size_t>(id)].load(std::memory_order_acquire);
  if (c)
    return c;
  std::lock_guard<std::mutex> guard(t.mutex);
  c = t.slots[static_cast<std::size_t>(id)].load(std::memory_order_acquire);
  if (!c) {
    c = new device_counters;
    t.slots[static_cast<std::size_t>(id)].store(c, std::memory_order_release);
  }
  return c;
}

bool counted(int id) { return id >= 0 && id < max_counted_devices; }

struct lane_table {
  std::mutex mutex;
  std::vector<std::weak_ptr<lane_counters>> lanes;
};

lane_table& lanes() {
  static auto* t = new lane_table;
  return *t;
}

} // namespace

device_counters* device(int id) noexcept {
  if (!counted(id))
    return nullptr;
  auto& t = table();
  auto* c = t.slots[static_cast<std::size_t>(id)].load(std::memory_order_acquire);
  if (c)
    return c;
  try {
    return slot(t, id);
  } catch (...) {
    return nullptr; // no memory for a counter: the call is not counted
  }
}

std::uint64_t device_started(int id, const std::string& name) {
  if (!counted(id))
    return 0;
  auto& t = table();
  auto* c = slot(t, id);
  c->executed.store(0, std::memory_order_relaxed);
  c->queued.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> guard(t.mutex);
  t.names[static_cast<std::size_t>(id)] = name;
  t.started[static_cast<std::size_t>(id)] = true;
  t.started_ns[static_cast<std::size_t>(id)] = now_ns();
  t.generation[static_cast<std::size_t>(id)] = t.next_generation;
  return t.next_generation++;
}

void device_stopped(int id, std::uint64_t generation) {
  if (!counted(id))
    return;
  auto& t = table();
  std::lock_guard<std::mutex> guard(t.mutex);
  if (t.generation[static_cast<std::size_t>(id)] == generation)
    t.started[static_cast<std::size_t>(id)] = false;
}

std::shared_ptr<lane_counters> open_lane(std::uint64_t caller) {
  auto lane = std::make_shared<lane_counters>();
  lane->caller = caller;
  auto& t = lanes();
  std::lock_guard<std::mutex> guard(t.mutex);
  std::erase_if(t.lanes, [](auto& weak) {
    auto l = weak.lock();
    return !l || l->retired.load(std::memory_order_relaxed);
  });
  t.lanes.push_back(lane);
  return lane;
}

std::shared_ptr<lane_counters> find_lane(std::uint64_t caller) {
  auto& t = lanes();
  std::lock_guard<std::mutex> guard(t.mutex);
  for (auto it = t.lanes.rbegin(); it != t.lanes.rend(); ++it)
    if (auto l = it->lock(); l && l->caller == caller && !l->retired.load(std::memory_order_relaxed))
      return l;
  return nullptr;
}

transfer_counters& transfers() noexcept {
  static transfer_counters counters;
  return counters;
}

transfer_in_flight::transfer_in_flight(std::uint64_t bytes, bool sending) noexcept : bytes_(bytes), sending_(sending) {
  transfers().bytes_in_flight.fetch_add(static_cast<std::int64_t>(bytes_), std::memory_order_relaxed);
}

transfer_in_flight::~transfer_in_flight() {
  auto& t = transfers();
  t.bytes_in_flight.fetch_sub(static_cast<std::int64_t>(bytes_), std::memory_order_relaxed);
  if (!done_)
    return;
  (sending_ ? t.bytes_sent : t.bytes_received).fetch_add(bytes_, std::memory_order_relaxed);
  t.transfers.fetch_add(1, std::memory_order_relaxed);
}

std::vector<device_reading> read_devices() {
  auto& t = table();
  std::vector<device_reading> out;
  std::lock_guard<std::mutex> guard(t.mutex);
  for (int id = 0; id < max_counted_devices; ++id) {
    if (!t.started[static_cast<std::size_t>(id)])
      continue;
    auto* c = t.slots[static_cast<std::size_t>(id)].load(std::memory_order_acquire);
    device_reading r;
    r.id = id;
    r.name = t.names[static_cast<std::size_t>(id)];
    r.started_ns = t.started_ns[static_cast<std::size_t>(id)];
    // Executed first: it never passes queued, so the depth read this way is never negative.
    r.executed = c->executed.load(std::memory_order_relaxed);
    r.queued = c->queued.load(std::memory_order_relaxed);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<lane_reading> read_lanes() {
  auto& t = lanes();
  std::vector<lane_reading> out;
  std::lock_guard<std::mutex> guard(t.mutex);
  std::erase_if(t.lanes, [](auto& weak) {
    auto l = weak.lock();
    return !l || l->retired.load(std::memory_order_relaxed);
  });
  for (auto& weak : t.lanes) {
    auto l = weak.lock();
    lane_reading r;
    r.caller = l->caller;
    r.done = l->done.load(std::memory_order_relaxed);
    r.queued = l->queued.load(std::memory_order_relaxed);
    r.running = l->running.load(std::memory_order_relaxed);
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.caller < b.caller; });
  return out;
}

} // namespace am::detail::stats
