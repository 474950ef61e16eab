/// The trace recorder's storage: every thread records into its own buffer, with no
/// lock and no allocation per event (chunks of events, taken from a per-process budget); a writer
/// reads every buffer when the trace is written. Internal: the runtime records through
/// observability/trace_hooks.hpp, users through observability/trace.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace am::observability {

namespace trace_detail {
/// True while a trace is being recorded. Read relaxed on every hook: the whole cost when off.
inline std::atomic<bool> trace_recording{false};
} // namespace trace_detail

/// Whether a trace is being recorded (one relaxed load).
inline bool tracing() noexcept {
  return trace_detail::trace_recording.load(std::memory_order_relaxed);
}

/// The steady clock in nanoseconds: the clock of trace files (and of the offset exchange).
std::int64_t trace_clock_ns() noexcept;

/// The clock events are stamped with while recorded: the time-stamp counter on x86-64 (cheaper to
/// read than the steady clock, and a span reads the clock twice), the steady clock's nanoseconds
/// elsewhere. collect() turns ticks into trace_clock_ns() nanoseconds.
inline std::int64_t trace_ticks() noexcept {
#if defined(__x86_64__)
  return static_cast<std::int64_t>(__builtin_ia32_rdtsc());
#else
  return trace_clock_ns();
#endif
}

/// Where an event is shown. Ids of one kind are offset so that kinds never share a track.
namespace track {
inline constexpr std::uint32_t thread_base = 1;           ///< + the thread's number
inline constexpr std::uint32_t device_base = 100000;      ///< + the device's global id
inline constexpr std::uint32_t host_lane_base = 200000;   ///< + the lane's number in this process
inline constexpr std::uint32_t collective_base = 300000;  ///< + the communicator's number
inline constexpr std::uint32_t counter_track = 400000;    ///< counter samples (no track of their own)
} // namespace track

/// One recorded event. Names, categories and argument keys are string literals; `text` and
/// `name_id` are strings interned in the recording thread's buffer (0: none): the detail (written
/// as args.detail) and a name that replaces `name` (user scopes, program names).
struct trace_event {
  std::int64_t start_ns = 0;      ///< trace_ticks() while recorded; nanoseconds once collected
  std::int64_t dur_ns = -1;       ///< < 0: an instant; ticks, then nanoseconds, as start_ns
  const char* name = nullptr;     ///< literal, unless `name_id`
  const char* category = nullptr;
  std::uint32_t track = 0;
  std::uint32_t text = 0;         ///< interned detail string
  std::uint32_t name_id = 0;      ///< interned name (0: `name`)
  bool counter = false;           ///< a counter sample ("ph": "C"): its value is argument a
  const char* a_key = nullptr;    ///< numeric arguments (null key: absent)
  std::int64_t a = 0;
  const char* b_key = nullptr;
  std::int64_t b = 0;
  const char* c_key = nullptr;
  std::int64_t c = 0;
  /// An arrow (a Chrome "flow" event) that starts at this span or, when `flow_end`, ends at it:
  /// the writer pairs the ends that carry one id (0: no arrow). The id is unique in the process
  /// (trace_hooks: a device call's caller, sequence number and device).
  std::uint64_t flow = 0;
  bool flow_end = false;
};

/// Records `e` into this thread's buffer (dropped, and counted, once the budget is spent).
void record(const trace_event& e) noexcept;

/// Interns `s` in this thread's buffer; the id goes into trace_event::text. 0 when over budget.
std::uint32_t intern(std::string_view s) noexcept;

/// The session's number (a new one for every start_recording); interned ids are valid in one.
std::uint64_t trace_session() noexcept;

/// This thread's own track (thread_base + its number).
std::uint32_t this_thread_track() noexcept;

/// Names track `id` (first name wins); cheap after the first call for an id on this thread.
void name_track(std::uint32_t id, std::string_view name) noexcept;

/// Names this thread's own track unless it has a name already (e.g. "host lane 3").
void name_this_thread(std::string_view name) noexcept;

/// An event as the writer sees it, with its strings resolved.
struct collected_event {
  trace_event e;
  std::string text; ///< the interned detail, "" when none
  std::string name; ///< the name: interned or literal
};

/// What a writer collects: every event of the session, the track names, the events lost for want
/// of room (`dropped`) and, in a ring, the oldest ones written over (`overwritten`).
struct collected_trace {
  std::vector<collected_event> events;
  std::vector<std::pair<std::uint32_t, std::string>> track_names;
  std::uint64_t dropped = 0;
  std::uint64_t overwritten = 0;
};

/// What a session does once its budget of events is spent.
enum class when_full {
  drop_newest, ///< keep the first events, count the rest as dropped (the default)
  ring,        ///< each thread writes over its own oldest events, so the last ones are kept
};

/// Starts a new session: forgets the events of the last one (buffers of ended threads are freed),
/// sets the budget to `max_events`, and turns recording on.
void start_recording(std::uint64_t max_events, when_full full = when_full::drop_newest);

/// Turns recording off (events being recorded right now still land).
void stop_recording() noexcept;

/// Every event recorded in this session so far, by every thread, its times in trace_clock_ns().
collected_trace collect();

/// How many events this session holds so far (cheap: no event is read). It stops growing once the
/// budget is spent (drop_newest), which is how the periodic flush knows it has nothing new.
std::uint64_t recorded_events();

} // namespace am::observability
