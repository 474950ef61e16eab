/// `actormesh launch` and traces: when the launcher runs with AM_TRACE=path, each process of the
/// launch writes path.rank<i> (observability/trace_session.hpp); at the end the launcher merges them
/// into path, one trace whose processes are the launch's, on process 0's clock (each process has
/// already shifted its events by the clock offset it measured through the supervisor).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace am::tools {

/// Merges the trace files `inputs` (each one process's) into `output` and removes the inputs.
/// Events keep their process ids; times are shifted so that the earliest is at 0 when any is
/// negative. Returns "" or what went wrong (a file that cannot be read or parsed is named).
std::string merge_trace_files(const std::vector<std::string>& inputs, const std::string& output);

/// Before a launch of processes first .. first + processes - 1 of a cluster of `world`: when AM_TRACE
/// names a file, removes their FILE.rank<i> left by an earlier run, so that only this launch's
/// processes are merged.
void remove_stale_launch_traces(int first, int processes, int world);

/// After that launch: when AM_TRACE names a file, merges those processes' FILE.rank<i> that exist
/// into FILE (with several nodes, each node's launcher merges its own), saying on `err` what was
/// merged or why not.
void merge_launch_traces(int first, int processes, int world, std::ostream& err);

} // namespace am::tools
