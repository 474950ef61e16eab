// What every benchmark program shares when it reports: percentiles of timed samples, and a main
// that turns an escaping error into one line and exit status 2.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <vector>

namespace am::bench {

/// The `q`-quantile (0..1) of `v`, nearest rank; `v` must not be empty.
inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

/// Median seconds of `reps` runs of `body` after one warm-up run.
inline double median_seconds(int reps, const std::function<void()>& body) {
  body();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return percentile(t, 0.5);
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
