/// A trace session: where the trace goes, who started it (the runtime from its trace option, or
/// am::start_trace), and writing it. The runtime calls runtime_trace_start once its cluster is
/// joined and runtime_trace_stop once its actors are joined; a session still open at the normal
/// exit of the process is written then. Internal.
#pragma once

#include "observability/trace_buffer.hpp"
#include "actormesh/observability/trace.hpp"

#include <string>

namespace am::detail {
class cluster_services;
}

namespace am::observability {

/// The most events one session keeps (AM_TRACE_MAX_EVENTS, default 2^20; 96 bytes each); the
/// rest are counted as dropped in the file.
std::uint64_t trace_max_events();

/// What a session does once its budget is spent: AM_TRACE_RING=1 keeps each thread's last events
/// (a ring), unset or 0 keeps the first ones and drops the rest (the default). Either way the
/// loss is said on stderr when the trace is written.
when_full trace_when_full();

/// The file a process writes: `path` alone, or `path.rank<process>` in a cluster of processes > 1.
std::string trace_file_of(const std::string& path, int process, int processes);

/// The trace option's file for the `runtime`-th runtime (from 1) a program starts with it: the
/// first writes `path`, later ones number it before its extension (trace.json, trace.2.json,
/// trace.3.json; "trace" gives trace.2), so that no runtime writes over another's trace.
std::string numbered_trace_path(const std::string& path, int runtime);

/// Starts recording for the runtime when `path` (its trace option) is set and no session is open,
/// into trace_file_of(path, process, processes); am::value_error naming the file and why when it
/// cannot be written. With a session open already (am::start_trace) only names the process.
void runtime_trace_open(const std::string& path, int process, int processes);

/// Once the cluster is joined: measures the open session's clock offset to process 0 (a cluster of
/// more than one process only; process 0 answers the others). Nothing when no session is open.
void runtime_trace_joined(detail::cluster_services& cluster);

/// Writes and closes the session the runtime started (others stay open). Never throws: a failed
/// write is logged as an error naming the file and why.
void runtime_trace_stop() noexcept;

/// Opens a session for `path`, started by code (am::start_trace), recording now or, with a
/// schedule, from its steps on. Throws like runtime_trace_start, and am::value_error for a
/// negative count in the schedule.
void code_trace_start(const std::string& path, const am::trace_schedule& schedule = {});

/// One step of code's schedule (am::trace_step): begins the warm-up or the active steps when
/// their step comes, and writes and closes the session after its last active step, returning the
/// file then ("" otherwise, and when no scheduled session is open).
std::string code_trace_step();

/// Writes and closes the session code started; returns the file ("" when none was open). Throws
/// am::runtime_error when the file cannot be written.
std::string code_trace_stop();

} // namespace am::observability
