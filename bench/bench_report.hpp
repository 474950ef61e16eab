// What every benchmark program shares when it reports: percentiles of timed samples (with a
// progress display for long measurements), and a main that turns an escaping error into one line
// and exit status 2.
#pragma once

#include "tools/progress_display.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace am::bench {

/// The `q`-quantile (0..1) of `v`, nearest rank; `v` must not be empty.
inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

/// Median seconds of `reps` runs of `body` after one warm-up run. When the runs will take more
/// than a few seconds (judged by the warm-up), their progress is shown on standard error: a bar on
/// a terminal, a plain line every 10% otherwise (standard output keeps only the results).
inline double median_seconds(int reps, const std::function<void()>& body) {
  auto warm_start = std::chrono::steady_clock::now();
  body();
  double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
  std::optional<am::tools::progress_display> progress;
  if (warm * reps > 3.0)
    progress.emplace(std::cerr, am::tools::is_terminal(std::cerr), "runs");
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (progress)
      progress->update(r + 1, reps);
  }
  if (progress)
    progress->finish();
  return percentile(t, 0.5);
}

/// The byte at offset `i` of what a transfer benchmark sends (tcp_peer, mpi_peers send,
/// bench_cluster_transfer), so that the receiver can check what arrived.
inline std::uint8_t transfer_pattern(std::size_t i) { return static_cast<std::uint8_t>(i * 131 + 7); }

/// Whether `buffer` holds transfer_pattern (one byte in 4093 looked at).
inline bool holds_transfer_pattern(const std::vector<std::uint8_t>& buffer) {
  for (std::size_t i = 0; i < buffer.size(); i += 4093)
    if (buffer[i] != transfer_pattern(i))
      return false;
  return true;
}

/// A transfer benchmark's line, "<what>, M MiB, R rounds: median ... GB/s (range ...), bytes right",
/// and its "RESULT <key> <GB/s>" line, from the seconds of each timed transfer of `bytes`.
inline void report_transfer(const char* what, const char* key, std::size_t bytes, const std::vector<double>& seconds,
                            bool right) {
  auto rate = [&](double s) { return static_cast<double>(bytes) / s / 1e9; };
  const double med = percentile(seconds, 0.5);
  std::printf("%s, %zu MiB, %zu rounds: median %.1f ms, %.3f GB/s (range %.3f-%.3f), bytes %s\n", what, bytes >> 20,
              seconds.size(), med * 1e3, rate(med), rate(percentile(seconds, 1.0)), rate(percentile(seconds, 0.0)),
              right ? "right" : "WRONG");
  std::printf("RESULT %s %.4f\n", key, rate(med));
  std::fflush(stdout);
}

/// One figure for bench/run_cpu_benchmarks.sh's table: `RATIO <value> <what>` on standard output,
/// `what` naming the figure and its peer the way the benchmark's own line does (which way is better
/// is in that line: a speed ratio, or a cost such as a trace's).
inline void ratio_line(double value, const std::string& what) {
  std::fflush(stdout);
  std::printf("RATIO %.3f %s\n", value, what.c_str());
  std::fflush(stdout);
}

/// Runs `run(argc, argv)`; an exception becomes "<name>: <what>" on stderr and status 2.
template <class Run>
int guarded_main(const char* name, Run&& run, int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  }
}

} // namespace am::bench
