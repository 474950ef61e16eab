/// Writes a collected trace as Chrome's trace event JSON ({"traceEvents": [...], "displayTimeUnit":
/// "ns", "otherData": {...}}): "X" complete events and "i" instants with ts and dur in microseconds,
/// "M" metadata naming the process and every track, and "s"/"f" flow events for the arrows from a
/// caller's dispatch span to the device span that ran the call. Events are nested per track: an event that
/// overlaps another on its track without nesting in it goes to a sibling track ("<name> (overlap
/// k)"), so every track is well nested as Perfetto and chrome://tracing require. Internal.
#pragma once

#include "observability/trace_buffer.hpp"

#include <cstdint>
#include <string>

namespace am::observability {

/// Where a process's trace sits among the cluster's.
struct trace_process_info {
  int process = 0;              ///< the process index (its events' "pid" is trace_pid_of(process))
  int processes = 1;
  std::int64_t origin_ns = 0;   ///< time zero, on process 0's clock
  std::int64_t offset_ns = 0;   ///< this process's clock + offset = process 0's clock
  std::int64_t rtt_ns = 0;      ///< the round trip of the best offset measure (0: not measured)
  std::string clock_note;       ///< how the offset was had ("local", "measured through the supervisor", why not)
};

/// The "pid" of process `process`'s events: process + 1, since Perfetto keeps pid 0 for the
/// kernel's idle task and a trace whose process is pid 0 is shown apart from its threads.
inline constexpr int trace_pid_of(int process) noexcept {
  return process + 1;
}

/// The sibling track k (k >= 1) of `track`, for events that overlap without nesting.
inline constexpr std::uint32_t overlap_track(std::uint32_t track, std::uint32_t k) noexcept {
  return track + k * 1000000u;
}

/// A flow arrow's id as written in a trace file: `id` (unique in its process) mixed with `salt`
/// (the process's pid; `trace merge` uses it again for a file whose pids it renumbers), so that
/// the arrows of several processes merged into one file do not share ids.
std::uint64_t flow_id_in_file(std::uint64_t id, std::int64_t salt) noexcept;

/// An id as Chrome's trace format writes it, a string of "0x" and hex digits (a JSON number would
/// lose digits past 2^53 in JavaScript viewers).
std::string flow_id_text(std::uint64_t id);

/// The JSON text of `trace`.
std::string trace_json(const collected_trace& trace, const trace_process_info& info);

/// Writes `text` to `path` through a temporary file and a rename. Returns "" or why it failed.
std::string write_text_file(const std::string& path, const std::string& text);

/// Throws am::value_error unless `path` names a file that can be written (its folder exists and is
/// writable, and the file, if it exists, is a writable regular file). `what` names the setting.
void check_trace_path(const std::string& path, const std::string& what);

} // namespace am::observability
