#include "observability/flight_recorder.hpp"

#include "observability/flight_dump.hpp"
#include "observability/trace_collectives.hpp"

#include "actors/detail/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace am::observability {

namespace {

constexpr std::size_t default_entries = 256;
/// Larger values are refused (an entry is a few hundred bytes; a million is already ~0.5 GB).
constexpr std::size_t max_entries = 1 << 20;

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// AM_FLIGHT_RECORDER_ENTRIES, or the default when unset, or (with a warning) when it is not a
/// number in 0..max_entries.
std::size_t configured_entries() {
  const char* text = std::getenv("AM_FLIGHT_RECORDER_ENTRIES");
  if (text == nullptr || *text == '\0')
    return default_entries;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0' || text[0] < '0' || text[0] > '9' || errno == ERANGE || v > max_entries) {
    detail::log(detail::log_level::warning,
                "AM_FLIGHT_RECORDER_ENTRIES='{}' is not a number of entries from 0 to {}: keeping the default {}", text,
                max_entries, default_entries);
    return default_entries;
  }
  return static_cast<std::size_t>(v);
}

} // namespace

const char* name(op_state s) noexcept {
  switch (s) {
    case op_state::issued: return "issued";
    case op_state::checked: return "checked";
    case op_state::completed: return "completed";
    case op_state::failed: return "failed";
  }
  return "unknown";
}

flight_recorder::flight_recorder(std::size_t capacity) : capacity_(capacity) {}

std::uint64_t flight_recorder::issue(std::string communicator, std::uint64_t step, std::string op, std::string dtype,
                                     std::string shape, std::string signature, std::vector<int> participants) {
  if (capacity_ == 0)
    return 0;
  flight_entry e;
  e.communicator = std::move(communicator);
  e.step = step;
  e.op = std::move(op);
  e.dtype = std::move(dtype);
  e.shape = std::move(shape);
  e.signature = std::move(signature);
  e.participants = std::move(participants);
  e.issued_us = now_us();
  std::lock_guard<std::mutex> guard(mutex_);
  e.record = next_++;
  if (ring_.size() == capacity_)
    ring_.pop_front();
  ring_.push_back(std::move(e));
  trace_collective_issued(this, ring_.back()); // the trace's hook (observability/trace_collectives.hpp)
  return ring_.back().record;
}

void flight_recorder::mark(std::uint64_t record, op_state state, const std::string& error) {
  if (record == 0)
    return;
  trace_collective_marked(this, record, state);
  const std::int64_t t = now_us();
  std::lock_guard<std::mutex> guard(mutex_);
  if (ring_.empty() || record < ring_.front().record || record > ring_.back().record)
    return;
  flight_entry& e = ring_[static_cast<std::size_t>(record - ring_.front().record)];
  e.state = state;
  if (state == op_state::checked)
    e.checked_us = t;
  if (state == op_state::completed || state == op_state::failed)
    e.ended_us = t;
  if (state == op_state::failed)
    e.error = error;
}

std::vector<flight_entry> flight_recorder::entries() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return {ring_.begin(), ring_.end()};
}

flight_recorder& process_flight_recorder() {
  static flight_recorder recorder(configured_entries());
  return recorder;
}

std::string flight_recorder_directory() {
  const char* dir = std::getenv("AM_FLIGHT_RECORDER_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp/actormesh-flight-recorder";
}

std::string dump_flight_recorder(int process, const std::string& reason) noexcept {
  try {
    auto& recorder = process_flight_recorder();
    if (recorder.capacity() == 0)
      return "";
    flight_dump dump;
    dump.process = process;
    dump.reason = reason;
    dump.dumped_us = now_us();
    dump.entries = recorder.entries();
    const std::filesystem::path dir = flight_recorder_directory();
    std::filesystem::create_directories(dir);
    const auto path = dir / ("flight_recorder." + std::to_string(process) + ".txt");
    const auto tmp = dir / ("flight_recorder." + std::to_string(process) + ".txt.tmp" + std::to_string(::getpid()));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      write_flight_dump(out, dump);
      out.flush();
      if (!out)
        return "";
    }
    std::filesystem::rename(tmp, path);
    return path.string();
  } catch (...) {
    return "";
  }
}

std::string flight_recorder_note(const std::string& path) {
  return path.empty() ? "" : " (flight recorder: " + path + ")";
}

} // namespace am::observability
