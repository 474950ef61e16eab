/// Traces of several processes in one file. Under `actormesh launch` with AM_TRACE=path (or the
/// program's --am-trace path), each process writes path.rank<i> (observability/trace_session.hpp);
/// at the end the launcher merges them into path, one trace whose processes are the launch's, on
/// process 0's clock (each process has already shifted its events by the clock offset it measured
/// through the supervisor). A program that starts several runtimes writes path, path's .2, .3, ...
/// (numbered_trace_path), and each is merged on its own. `actormesh trace merge` does the same for
/// files the user names.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace am::tools {

/// What merge_trace_files does with its inputs once the output is written.
enum class after_merge { keep_inputs, remove_inputs };

/// Merges the trace files `inputs` into `output`. Events keep their process ids, except that a pid
/// an earlier input used already is given the next free one (so two single-process traces do not
/// share tracks), said on `notes`; times are shifted so that the earliest is at 0 when any is
/// negative. Returns "" or what went wrong (a file that cannot be read or parsed is named).
std::string merge_trace_files(const std::vector<std::string>& inputs, const std::string& output, after_merge then,
                              std::ostream& notes);

/// The trace a launched program asks for: the value of its last --am-trace flag (before a "--"),
/// else AM_TRACE; "" when neither names a file.
std::string launch_trace_path(const std::vector<std::string>& command);

/// Before a launch of processes first .. first + processes - 1 of a cluster of `world`: removes the
/// rank files (`path`.rank<i>, and those of later runtimes' numbered paths) an earlier run left,
/// so that only this launch's processes are merged. Nothing when `path` is empty.
void remove_stale_launch_traces(const std::string& path, int first, int processes, int world);

/// After that launch: merges those processes' rank files that exist into `path` (and each later
/// runtime's into its numbered path; with several nodes, each node's launcher merges its own),
/// saying on `err` what was merged or why not.
void merge_launch_traces(const std::string& path, int first, int processes, int world, std::ostream& err);

} // namespace am::tools
