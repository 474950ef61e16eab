/// `actormesh info --watch`: the live counters (am::runtime_stats) of every process of a running
/// cluster, asked of its mesh supervisor on the coordinator's address, refreshed in place on a
/// terminal and printed as plain blocks otherwise.
#pragma once

#include "actormesh/observability/runtime_stats.hpp"

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

namespace am::detail::stats {
struct process_stats;
}

namespace am::tools {

/// What the watch does, as the command line gives it.
struct watch_options {
  std::string coordinator;                    ///< "host:port" of process 0 (AM_COORDINATOR)
  int count = 0;                              ///< refreshes, then it ends; 0: until the cluster goes
  double interval_seconds = 1.0;              ///< between refreshes
  std::chrono::milliseconds connect_timeout{10000}; ///< to reach the coordinator (it may be starting)
  std::chrono::milliseconds answer_timeout{5000};   ///< for each refresh's answers
  std::string secret; ///< the cluster's secret (AM_CLUSTER_TOKEN or AM_CLUSTER_TOKEN_FILE), if it has one
  bool json = false;  ///< --json: one JSON object per refresh, one line each, never redrawn
  int rows = 0;       ///< a terminal's height to clip frames to (0: the terminal's own)
};

/// Watches the cluster at options.coordinator, printing each refresh to `out` (redrawn in place
/// when `terminal` and not options.json, clipped to the terminal's height). Returns after options.count refreshes. Throws am::value_error for a bad
/// address, am::runtime_error when the coordinator cannot be reached within the connect timeout or
/// stops answering (the cluster ended).
void watch_cluster(const watch_options& options, std::ostream& out, bool terminal);

/// One refresh as text (no escape sequences): a header line, then per process its devices, lanes
/// and transfers, or why it gave no answer.
std::string render_cluster_stats(const std::string& coordinator, const std::vector<detail::stats::process_stats>& all,
                                 int refresh, int count);

/// One refresh as a single line of JSON: {"coordinator", "refresh", "processes": [{"process", "ok",
/// "error" or "uptime_seconds", "interval_seconds", "devices", "lanes", "transfers"}]}, every
/// field of the snapshot under its runtime_stats name.
std::string render_cluster_stats_json(const std::string& coordinator,
                                      const std::vector<detail::stats::process_stats>& all, int refresh);

/// `frame` cut to `rows` lines when it is taller: its first rows - 1 lines, then one saying how many
/// were left out (a frame taller than the terminal would scroll instead of being redrawn).
std::string clip_frame(const std::string& frame, int rows);

/// Bytes as people read them: "512 B", "1.5 KiB", "12.0 MiB".
std::string format_bytes(double bytes);

} // namespace am::tools
