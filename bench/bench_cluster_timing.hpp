// What the benchmarks that run as every process of a cluster share: timing a call back to back,
// and reporting the slowest process's figure (a broadcast's root, or a process that leaves a
// collective early, would otherwise flatter the result).
#pragma once

#include <actormesh.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace am::bench {

/// Runs `op` warmup + rounds times back to back; the microseconds of each of the last `rounds`.
template <class Op>
std::vector<double> time_calls(long long warmup, long long rounds, Op&& op) {
  using clock_type = std::chrono::steady_clock;
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(std::max(0LL, rounds)));
  for (long long k = 0; k < warmup + rounds; ++k) {
    auto start = clock_type::now();
    op();
    if (k >= warmup)
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
  }
  return us;
}

/// The largest of every process's `mine` (one process_allgather; call it outside any timed part,
/// on every process).
inline double slowest_of_processes(double mine) {
  am::host_array all = am::multihost::process_allgather(mine);
  const double* v = reinterpret_cast<const double*>(all.bytes().data());
  return *std::max_element(v, v + all.size());
}

} // namespace am::bench
