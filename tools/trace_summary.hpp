/// `actormesh trace summary`: what a Chrome trace event file (observability/trace.hpp writes them)
/// says about each track: busy time, idle gaps and the longest stalls, and about each span name
/// (count, total, mean, max, as PyTorch's key_averages().table()). Reads any file in the trace
/// event format ({"traceEvents": [...]} or a bare array; "X" complete events, "B"/"E" pairs,
/// "i" instants, "M" names), PyTorch's exports (named pids and tids) and gzip-compressed files
/// (.json.gz), streaming: one event at a time (nlohmann's JSON parser, zlib), never the whole file
/// in memory; every malformed input is refused with am::value_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace am::tools {

/// A span on a track, in microseconds of the trace's clock.
struct trace_interval {
  double start_us = 0;
  double end_us = 0;
  double length_us() const { return end_us - start_us; }
};

/// One span event ("X", or a "B"/"E" pair), as drawn on a timeline.
struct trace_bar {
  trace_interval when;
  std::string name;
  int depth = 0; ///< how many spans of its track enclose it
};

/// A stall: a "stall" instant on a track to the next "resume" of the same caller (args.caller).
struct trace_stall {
  trace_interval when;
  std::int64_t caller = -1; ///< -1 when the events name none
  bool resumed = true;      ///< false when the trace ends before the resume
};

/// What one track (one pid, tid pair) did.
struct trace_track_summary {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string name;                        ///< "process / thread" from the "M" events, else "pid P tid T"
  std::size_t spans = 0;                   ///< span events
  std::size_t instants = 0;                ///< instant events
  trace_interval active;                   ///< first span start to last span end (zero when none)
  double busy_us = 0;                      ///< time covered by at least one span (nesting counted once)
  std::vector<trace_interval> idle_gaps;   ///< gaps between spans inside `active`, in time order
  double idle_us = 0;                      ///< their total: active length - busy_us
  std::vector<trace_stall> stalls;         ///< in time order
  std::vector<trace_bar> bars;             ///< every span, by start
  std::vector<std::pair<double, std::string>> marks; ///< every instant: time and name
};

/// The spans of one name over every track.
struct trace_name_summary {
  std::string name;
  std::size_t count = 0;
  double total_us = 0;
  double max_us = 0;
  double mean_us() const { return count ? total_us / static_cast<double>(count) : 0; }
};

/// A whole trace.
struct trace_summary {
  std::vector<trace_track_summary> tracks; ///< by pid, then tid
  std::vector<trace_name_summary> names;   ///< by total time, longest first
  trace_interval span;                     ///< earliest event to latest end over every track
  std::size_t events = 0;                  ///< span and instant events read (metadata apart)
};

/// Reads the trace event JSON `text`. Throws am::value_error ("trace: ...") for anything that is
/// not a trace: invalid or truncated JSON, a missing or ill-typed field, a negative duration, an
/// "E" without its "B".
trace_summary summarize_trace(std::string_view text);

/// Reads the file at `path`, plain or gzip-compressed (told by its first bytes); am::value_error
/// when it cannot be read.
trace_summary summarize_trace_file(const std::string& path);

/// Prints the summary: one line per track, the `names` span names of the longest total time (a
/// table like PyTorch's key_averages().table()), then the `top` longest idle gaps and stalls.
void print_trace_summary(std::ostream& out, const trace_summary& summary, std::size_t top, std::size_t names = 15);

/// A duration in microseconds as people read it: "850 us", "12.345 ms", "3.210 s".
std::string format_duration(double us);

} // namespace am::tools
