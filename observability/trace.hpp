/// Traces: what the runtime did, as Chrome's trace event JSON that Perfetto and
/// chrome://tracing open. A trace is recorded when
///   - the environment says AM_TRACE=path (or the flag --am-trace path, or options::trace in code):
///     the runtime records from its start and writes the file when it stops (a process of a
///     cluster of N > 1 processes writes path.rank<i>; `actormesh launch` merges them into path);
///   - or code calls am::start_trace(path) ... am::stop_trace(), or records chosen steps of a loop
///     with am::start_trace(path, am::trace_schedule{wait, warmup, active}) and am::trace_step().
/// Every process records device programs (name, shard shapes), lane messages (send, admit, stall,
/// resume), shard transfers, collectives and barriers, colocated calls, host tasks and the user's
/// trace_scope spans, one track per device, per thread and per communicator. doc/observability.md.
#ifndef ACTORMESH_OBSERVABILITY_TRACE_HPP
#define ACTORMESH_OBSERVABILITY_TRACE_HPP

#include <cstdint>
#include <string>
#include <string_view>

namespace am {

/// Records a span named `name` on the calling thread's track, from construction to destruction,
/// while a trace is recorded (nothing otherwise: one relaxed load). Scopes on one thread nest.
class trace_scope {
public:
  /// Starts the span.
  explicit trace_scope(std::string_view name) noexcept;
  /// Ends and records the span.
  ~trace_scope();
  trace_scope(const trace_scope&) = delete;
  trace_scope& operator=(const trace_scope&) = delete;

private:
  std::int64_t start_ns_ = 0;
  std::uint64_t session_ = 0;
  std::uint32_t name_ = 0;
  std::uint32_t track_ = 0;
  bool active_ = false;
};

/// True while a trace is being recorded in this process.
bool trace_enabled() noexcept;

/// Starts recording a trace to be written to `path` by stop_trace() (or, if never called, at the
/// normal exit of the process). Throws am::value_error when `path` cannot be written (naming it
/// and why), or when a trace is already being recorded.
void start_trace(const std::string& path);

/// Stops recording and writes the trace started by start_trace(); returns the file written ("" when
/// no trace was started by start_trace). Throws am::runtime_error when the file cannot be written.
std::string stop_trace();

/// Which steps of a loop a trace records, as PyTorch's profiler schedule(wait, warmup, active):
/// the first `wait` steps are not recorded, the next `warmup` are recorded and then forgotten (the
/// first calls of a loop compile and allocate), the `active` ones after them are kept, and the
/// trace is written when the last of them ends. Steps are counted by am::trace_step().
struct trace_schedule {
  int wait = 0;   ///< steps skipped, >= 0
  int warmup = 0; ///< steps recorded and dropped, >= 0
  int active = 0; ///< steps recorded and written; 0: no schedule (record from start_trace on)
};

/// Starts a trace to `path` that follows `schedule` (see trace_schedule): call am::trace_step()
/// at the end of each step. stop_trace() before the last active step writes what was kept so far.
/// Throws as start_trace(path) does, and am::value_error for a negative count.
void start_trace(const std::string& path, const trace_schedule& schedule);

/// Ends one step of the scheduled trace: the warm-up or the active steps begin when their step
/// comes, and after the last active step the trace is written; returns its file then, "" on other
/// steps and when no scheduled trace is open (so a loop may call it always). Throws
/// am::runtime_error when the file cannot be written.
std::string trace_step();

} // namespace am

#endif // ACTORMESH_OBSERVABILITY_TRACE_HPP
