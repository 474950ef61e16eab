#include "observability/trace_sampler.hpp"

#include "observability/stats_counters.hpp"
#include "observability/trace_buffer.hpp"

#include "actors/detail/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

namespace am::observability {

namespace {

/// A count of milliseconds from the environment variable `name` (`scale` milliseconds a unit), or
/// `fallback` (with a warning when set to something else than a count up to a day).
std::chrono::milliseconds interval_from(const char* name, std::int64_t scale, std::chrono::milliseconds fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0')
    return fallback;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < 0 || v * scale > 86'400'000) {
    detail::log(detail::log_level::warning, "{}='{}' is not a count from 0 to a day: keeping the default", name, text);
    return fallback;
  }
  return std::chrono::milliseconds(v * scale);
}

/// Records a counter sample named `name` (interned on this thread) with `key` = `value`.
void record_counter(const std::string& name, const char* key, std::int64_t value) {
  trace_event e;
  e.start_ns = trace_ticks();
  e.counter = true;
  e.category = "counter";
  e.name = "counter";
  e.name_id = intern(name);
  e.track = track::counter_track;
  e.a_key = key;
  e.a = value;
  record(e);
}

/// The counters as last recorded, so that a sample is recorded only when a value changes.
struct last_values {
  std::map<int, std::int64_t> device_depths;
  std::int64_t lane_depth = -1;
  std::int64_t bytes_in_flight = -1;
};

void sample(last_values& last) {
  for (auto& d : detail::stats::read_devices()) {
    const auto depth = static_cast<std::int64_t>(d.queued > d.executed ? d.queued - d.executed : 0);
    auto [it, fresh] = last.device_depths.try_emplace(d.id, -1);
    if (fresh || it->second != depth) {
      record_counter("queue depth " + d.name, "calls", depth);
      it->second = depth;
    }
  }
  std::int64_t lanes = 0;
  for (auto& l : detail::stats::read_lanes())
    lanes += static_cast<std::int64_t>(l.queued > l.done ? l.queued - l.done : 0);
  if (lanes != last.lane_depth) {
    record_counter("host lanes: tasks queued", "tasks", lanes);
    last.lane_depth = lanes;
  }
  const auto flight = std::max<std::int64_t>(0, detail::stats::transfers().bytes_in_flight.load(std::memory_order_relaxed));
  if (flight != last.bytes_in_flight) {
    record_counter("transfers: bytes in flight", "bytes", flight);
    last.bytes_in_flight = flight;
  }
}

} // namespace

sampler_settings sampler_settings_from_environment() {
  sampler_settings s;
  s.counter_interval = interval_from("AM_TRACE_COUNTER_MS", 1, s.counter_interval);
  s.flush_interval = interval_from("AM_TRACE_FLUSH_SECONDS", 1000, s.flush_interval);
  return s;
}

trace_sampler::trace_sampler(sampler_settings settings, std::function<void()> flush)
    : settings_(settings), flush_(std::move(flush)) {
  if (settings_.counter_interval.count() > 0 || settings_.flush_interval.count() > 0)
    thread_ = std::thread([this] { run(); });
}

trace_sampler::~trace_sampler() {
  stop();
}

void trace_sampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void trace_sampler::run() {
  name_this_thread("trace sampler");
  using clock = std::chrono::steady_clock;
  const auto tick = settings_.counter_interval.count() > 0 ? settings_.counter_interval : settings_.flush_interval;
  auto next_flush = clock::now() + settings_.flush_interval;
  last_values last;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (wake_.wait_for(lock, tick, [this] { return stopping_; }))
      break;
    lock.unlock();
    try {
      if (settings_.counter_interval.count() > 0 && tracing())
        sample(last);
      if (settings_.flush_interval.count() > 0 && clock::now() >= next_flush) {
        flush_();
        next_flush = clock::now() + settings_.flush_interval;
      }
    } catch (const std::exception& e) {
      detail::log(detail::log_level::warning, "the trace sampler: {}", e.what());
    }
    lock.lock();
  }
}

} // namespace am::observability
