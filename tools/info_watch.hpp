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
};

/// Watches the cluster at options.coordinator, printing each refresh to `out` (redrawn in place
/// when `terminal`). Returns after options.count refreshes. Throws am::value_error for a bad
/// address, am::runtime_error when the coordinator cannot be reached within the connect timeout or
/// stops answering (the cluster ended).
void watch_cluster(const watch_options& options, std::ostream& out, bool terminal);

/// One refresh as text (no escape sequences): a header line, then per process its devices, lanes
/// and transfers, or why it gave no answer.
std::string render_cluster_stats(const std::string& coordinator, const std::vector<detail::stats::process_stats>& all,
                                 int refresh, int count);

/// Bytes as people read them: "512 B", "1.5 KiB", "12.0 MiB".
std::string format_bytes(double bytes);

} // namespace am::tools
