#include "observability/trace_session.hpp"

#include "observability/trace_buffer.hpp"
#include "actormesh/observability/trace.hpp"
#include "observability/trace_clock.hpp"
#include "observability/trace_sampler.hpp"
#include "observability/trace_writer.hpp"

#include "actors/cluster_services.hpp"
#include "actors/detail/log.hpp"
#include "actormesh/actors/errors.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

namespace am::observability {

namespace {

enum class owner { none, runtime, code };

struct session_state {
  std::mutex mutex;
  owner by = owner::none;
  std::string path; ///< the file to write
  trace_process_info info;
  bool exit_hook = false;
  std::uint64_t max_events = 0;           ///< the open session's budget
  std::unique_ptr<trace_sampler> sampler; ///< the open session's counter tracks and periodic flushes
  bool recording = false;                 ///< the open session records (a schedule may still wait)
  am::trace_schedule schedule;            ///< code's step schedule (active 0: none)
  int steps = 0;                          ///< trace_step() calls since the session opened
  std::map<std::string, int> runtimes_of; ///< per trace option: how many runtimes opened a session for it
  /// The events the file held at the last periodic flush (none yet: the largest value): a flush with
  /// nothing new (a full budget drops every later event) writes nothing.
  std::uint64_t flushed_events = ~std::uint64_t{0};
};

session_state& session() {
  static session_state* s = new session_state; // never destroyed: written from an exit handler
  return *s;
}

/// Says on stderr what the session lost: events dropped once its budget was spent (a warning, with
/// the two ways out) or, in a ring, how many of the oldest were written over.
void report_losses(const collected_trace& trace, const std::string& path, std::uint64_t max_events) {
  const auto kept = trace.events.size();
  if (trace.dropped > 0)
    detail::log(detail::log_level::warning,
                "the trace {} kept {} events and dropped {} more ({:.0f}% of all): its budget "
                "(AM_TRACE_MAX_EVENTS={}) was spent; raise it, or set AM_TRACE_RING=1 to keep the last events instead",
                path, kept, trace.dropped, 100.0 * static_cast<double>(trace.dropped) / static_cast<double>(kept + trace.dropped),
                max_events);
  if (trace.overwritten > 0)
    detail::log(detail::log_level::info, "the trace {} kept the last {} events (AM_TRACE_RING): {} older ones were written over",
                path, kept, trace.overwritten);
}

/// Writes the open session and closes it; "" or why the write failed. Under the state's mutex.
std::string write_and_close(session_state& s) {
  if (s.sampler) { // its last samples land before the recording stops; it never waits for this mutex
    s.sampler->stop();
    s.sampler.reset();
  }
  stop_recording();
  // A session whose schedule never reached its recording steps has no events of its own (what
  // collect() would find is an earlier session's).
  auto trace = s.recording ? collect() : collected_trace{};
  s.recording = false;
  report_losses(trace, s.path, s.max_events);
  auto text = trace_json(trace, s.info);
  s.by = owner::none;
  auto why = write_text_file(s.path, text);
  if (why.empty())
    detail::log(detail::log_level::info, "trace written to {}", s.path);
  return why;
}

/// The sampler's periodic flush: what the open session holds so far, written to its file, so that a
/// process killed later leaves its trace up to now. Skipped when the session is busy (opening,
/// closing, measuring its clock): the next flush comes soon.
void flush_now() {
  auto& s = session();
  std::unique_lock<std::mutex> lock(s.mutex, std::try_to_lock);
  if (!lock.owns_lock() || s.by == owner::none || !s.recording)
    return;
  // Each flush rewrites the whole file (a full trace: 120 MB, about 0.6 s): none when nothing is new.
  const auto held = recorded_events();
  if (held == s.flushed_events)
    return;
  s.flushed_events = held;
  auto why = write_text_file(s.path, trace_json(collect(), s.info));
  if (!why.empty())
    detail::log(detail::log_level::warning, "the trace could not be flushed to '{}': {}", s.path, why);
}

void write_at_exit() {
  auto& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.by == owner::none)
    return;
  auto why = write_and_close(s);
  if (!why.empty())
    detail::log(detail::log_level::error, "the trace could not be written to '{}': {}", s.path, why);
}

/// Opens a session; under the state's mutex.
void open(session_state& s, owner by, const std::string& file, const char* what) {
  check_trace_path(file, what);
  s.path = file;
  s.by = by;
  s.info = {};
  s.info.origin_ns = trace_clock_ns();
  s.info.clock_note = "one process";
  if (!s.exit_hook) {
    std::atexit(write_at_exit);
    s.exit_hook = true;
  }
  s.max_events = trace_max_events();
  s.schedule = {};
  s.steps = 0;
  s.recording = false;
}

/// Starts (or, after a schedule's warm-up, starts again, forgetting the warm-up's events) the open
/// session's recording and its sampler; under the state's mutex.
void begin_recording(session_state& s) {
  if (s.sampler) {
    s.sampler->stop();
    s.sampler.reset();
  }
  const auto full = trace_when_full();
  start_recording(s.max_events, full);
  s.recording = true;
  s.flushed_events = ~std::uint64_t{0};
  auto settings = sampler_settings_from_environment();
  if (full == when_full::ring)
    settings.flush_interval = std::chrono::milliseconds(0); // a ring's slots are written over while read
  s.sampler = std::make_unique<trace_sampler>(settings, flush_now);
}

/// Whether a schedule asks to record (or warm up) from the session's current step on.
bool schedule_records_at(const am::trace_schedule& schedule, int step) {
  return step >= schedule.wait;
}

} // namespace

std::uint64_t trace_max_events() {
  constexpr std::uint64_t fallback = 1u << 20;
  const char* text = std::getenv("AM_TRACE_MAX_EVENTS");
  if (text == nullptr || *text == '\0')
    return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end != '\0' || text[0] < '0' || text[0] > '9' || errno == ERANGE || v == 0 || v > (1ull << 32)) {
    detail::log(detail::log_level::warning,
                "AM_TRACE_MAX_EVENTS='{}' is not a count from 1 to 2^32: keeping the default {}", text, fallback);
    return fallback;
  }
  return v;
}

when_full trace_when_full() {
  const char* text = std::getenv("AM_TRACE_RING");
  if (text == nullptr || *text == '\0')
    return when_full::drop_newest;
  const std::string_view v(text);
  if (v == "1" || v == "on" || v == "true")
    return when_full::ring;
  if (v != "0" && v != "off" && v != "false")
    detail::log(detail::log_level::warning,
                "AM_TRACE_RING='{}' is not 1 or 0 (on/off, true/false): keeping the first events, as by default", text);
  return when_full::drop_newest;
}

std::string trace_file_of(const std::string& path, int process, int processes) {
  return processes > 1 ? path + ".rank" + std::to_string(process) : path;
}

std::string numbered_trace_path(const std::string& path, int runtime) {
  if (runtime <= 1)
    return path;
  const std::filesystem::path p(path);
  const std::string stem = p.stem().string();
  if (stem.empty() || stem == "." || stem == "..")
    return path + "." + std::to_string(runtime);
  auto numbered = p;
  numbered.replace_filename(stem + "." + std::to_string(runtime) + p.extension().string());
  return numbered.string();
}

void runtime_trace_open(const std::string& path, int process, int processes) {
  auto& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.by == owner::none) {
    if (path.empty())
      return;
    // A later runtime of the same program writes its own file (trace.2.json, ...), never over the first's.
    const int runtime = ++s.runtimes_of[path];
    open(s, owner::runtime, trace_file_of(numbered_trace_path(path, runtime), process, processes),
         "trace (AM_TRACE, --am-trace)");
    begin_recording(s);
  }
  s.info.process = process;
  s.info.processes = processes;
}

void runtime_trace_joined(detail::cluster_services& cluster) {
  auto& s = session();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.by == owner::none || cluster.process_count() <= 1)
    return;
  auto info = s.info;
  lock.unlock(); // the exchange waits on other processes
  measure_trace_clock(cluster, info.origin_ns, info);
  lock.lock();
  s.info.origin_ns = info.origin_ns;
  s.info.offset_ns = info.offset_ns;
  s.info.rtt_ns = info.rtt_ns;
  s.info.clock_note = info.clock_note;
}

void runtime_trace_stop() noexcept {
  try {
    auto& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.by != owner::runtime)
      return;
    auto why = write_and_close(s);
    if (!why.empty())
      detail::log(detail::log_level::error, "the trace could not be written to '{}': {}", s.path, why);
  } catch (const std::exception& e) {
    detail::log(detail::log_level::error, "the trace could not be written: {}", e.what());
  }
}

void code_trace_start(const std::string& path, const am::trace_schedule& schedule) {
  if (schedule.wait < 0 || schedule.warmup < 0 || schedule.active < 0)
    throw value_error("start_trace: the schedule's wait, warmup and active must be 0 or more, not "
                      + std::to_string(schedule.wait) + ", " + std::to_string(schedule.warmup) + ", "
                      + std::to_string(schedule.active));
  auto& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.by != owner::none)
    throw value_error("start_trace: a trace is already being recorded (to '" + s.path + "')");
  open(s, owner::code, path, "start_trace");
  s.schedule = schedule;
  if (schedule.active == 0 || schedule_records_at(schedule, 0))
    begin_recording(s);
}

std::string code_trace_step() {
  auto& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.by != owner::code || s.schedule.active == 0)
    return "";
  const int step = ++s.steps;
  const auto& plan = s.schedule;
  if (step == plan.wait || (step == plan.wait + plan.warmup && plan.warmup > 0))
    begin_recording(s); // the warm-up begins, or the active steps do (the warm-up's events dropped)
  if (step < plan.wait + plan.warmup + plan.active)
    return "";
  auto why = write_and_close(s);
  if (!why.empty())
    throw runtime_error("trace_step: cannot write the trace to '" + s.path + "': " + why);
  return s.path;
}

std::string code_trace_stop() {
  auto& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.by != owner::code)
    return "";
  auto why = write_and_close(s);
  if (!why.empty())
    throw runtime_error("stop_trace: cannot write the trace to '" + s.path + "': " + why);
  return s.path;
}

} // namespace am::observability
