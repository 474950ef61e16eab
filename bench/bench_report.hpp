// What every benchmark program shares when it reports: percentiles of timed samples, and a main
// that turns an escaping error into one line and exit status 2.
#pragma once

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

namespace am::bench {

/// The `q`-quantile (0..1) of `v`, nearest rank; `v` must not be empty.
inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
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
